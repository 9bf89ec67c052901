/**
 * `npm run admin -- <command>`: organizations, users, memberships, keys and the verification of
 * signed evidence from a shell, on the
 * configured database (DATABASE_URL, or the embedded one in VERITY_DATA_DIR while the server is
 * stopped); evidence files moved between the database and the object store; backups of a
 * running server and restores into a stopped one; the retention job, once; the deployments of
 * snapshots written before deployments were recorded.
 */
import pino from 'pino';
import { BACKUP_USAGE, backupCommand, restoreCommand } from './admin-backup.js';
import { AdminUsageError, USAGE, runAdmin } from './admin-commands.js';
import { DEPLOYMENTS_USAGE, deploymentsCommand } from './admin-deployments.js';
import { EVIDENCE_USAGE, evidenceCommand } from './admin-evidence.js';
import { RETENTION_USAGE, retentionCommand } from './admin-retention.js';
import { RestoreRefusedError } from './usecases/access/backup.js';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './storage/create-db.js';
import { migrateToLatest } from './storage/migrate.js';
import { buildSignatureTrust } from './workers/signed-evidence.mjs';
import { configuredEvidenceStore } from './object-store/configured-store.js';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(
      `${USAGE}\n\nEvidence files:\n${EVIDENCE_USAGE}\n\nBackups:\n${BACKUP_USAGE}\n\nRetention:\n${RETENTION_USAGE}\n\nDeployments:\n${DEPLOYMENTS_USAGE}\n`,
    );
    return;
  }
  if (argv[0] === 'backup') {
    // Through the running server: it alone may read its embedded database.
    process.stdout.write(`${(await backupCommand(argv)).join('\n')}\n`);
    return;
  }
  const config = loadConfig();
  if (argv[0] === 'restore') {
    if (config.databaseUrl) {
      throw new AdminUsageError('restore is for the embedded database; restore PostgreSQL with pg_restore');
    }
    process.stdout.write(`${(await restoreCommand(argv, config.dataDir)).join('\n')}\n`);
    return;
  }
  const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolMax: 2 });
  try {
    await migrateToLatest(handle, { transparencyLog: config.transparencyLog });
    if (argv[0] === 'evidence') {
      process.exitCode = await evidenceCommand(argv, config, handle.db, (line) =>
        process.stdout.write(`${line}\n`),
      );
      return;
    }
    if (argv[0] === 'deployments') {
      await deploymentsCommand(argv, handle.db, (line) => process.stdout.write(`${line}\n`));
      return;
    }
    const { store, objects } = configuredEvidenceStore(
      config,
      pino({ level: config.logLevel }, pino.destination(2)),
    );
    try {
      const trust = buildSignatureTrust(config.sigstoreTrustedRoot, config.sigstorePublicKeys);
      const lines =
        argv[0] === 'retention'
          ? await retentionCommand(handle.db, argv, config, { store })
          : await runAdmin(handle.db, argv, new Date(), trust, store);
      process.stdout.write(`${lines.join('\n')}\n`);
    } finally {
      objects?.close();
    }
  } finally {
    await handle.close();
  }
}

main().catch((err: unknown) => {
  if (err instanceof AdminUsageError || err instanceof ConfigError || err instanceof RestoreRefusedError) {
    process.stderr.write(`error: ${err.message}\n`);
  } else {
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
  }
  process.exit(1);
});
