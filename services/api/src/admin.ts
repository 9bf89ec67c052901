/**
 * `npm run admin -- <command>`: organizations, users, memberships and keys from a shell, on the
 * configured database (DATABASE_URL, or the embedded one in VERITY_DATA_DIR while the server is
 * stopped).
 */
import { AdminUsageError, USAGE, runAdmin } from './admin-commands.js';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './storage/create-db.js';
import { migrateToLatest } from './storage/migrate.js';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const config = loadConfig();
  const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolMax: 2 });
  try {
    await migrateToLatest(handle);
    const lines = await runAdmin(handle.db, argv);
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await handle.close();
  }
}

main().catch((err: unknown) => {
  if (err instanceof AdminUsageError || err instanceof ConfigError)
    process.stderr.write(`error: ${err.message}\n`);
  else process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
