/**
 * `npm run demo [-- --org <name>] [--days <n>]`: seeds a demo organization with a few weeks of
 * history into the configured database (DATABASE_URL, or the embedded one in VERITY_DATA_DIR while
 * the server is stopped), then says how to start the server and sign in to the console.
 */
import { parseArgs } from 'node:util';
import { buildApp } from '../app.js';
import { ConfigError, loadConfig } from '../config.js';
import { OrgName } from '../../../shared/contract/common.js';
import { openDatabase } from '../storage/create-db.js';
import { migrateToLatest } from '../storage/migrate.js';
import { orgsRepository } from '../storage/repositories/orgs.js';
import { DEMO_ACCOUNT, DemoClock, DemoOrgExistsError, seedDemo } from './seed.js';

class UsageError extends Error {}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { org: { type: 'string', default: 'acme' }, days: { type: 'string', default: '28' } },
  });
  const org = values.org;
  if (!OrgName.safeParse(org).success) {
    throw new UsageError(`--org '${org}' is not a valid organization name`);
  }
  const days = Number(values.days);
  if (!Number.isInteger(days) || days < 4 || days > 90) {
    throw new UsageError('--days must be an integer from 4 to 90');
  }

  // Seeding sends a few hundred requests in a row: no rate limit, no request log.
  const config = loadConfig({
    ...process.env,
    VERITY_RATE_LIMIT_PER_MINUTE: '0',
    VERITY_NOTIFIER_ENABLED: 'false',
  });
  const where = config.databaseUrl
    ? 'PostgreSQL (DATABASE_URL)'
    : `the embedded database in ${config.dataDir}`;
  const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolMax: 2 });
  try {
    await migrateToLatest(handle, { transparencyLog: config.transparencyLog });
    if (await orgsRepository.findByName(handle.db, org)) {
      throw new DemoOrgExistsError(org);
    }
    process.stdout.write(
      `Seeding the demo organization '${org}' (${days} days of history) into ${where}...\n`,
    );
    const clock = new DemoClock();
    const app = await buildApp({ config, database: handle, clock: clock.now, logger: false });
    await app.ready();
    const started = Date.now();
    let summary;
    try {
      summary = await seedDemo({ app, db: handle.db, clock, org, days });
    } finally {
      await app.close();
    }
    const env = Object.entries(summary.environments)
      .map(([name, n]) => `${name} (${n} snapshots)`)
      .join(', ');
    process.stdout.write(
      [
        `Done in ${((Date.now() - started) / 1000).toFixed(1)} s: ${summary.flows.length} flows, ${summary.trails} trails, ` +
          `${summary.artifacts} artifacts, ${summary.attestations} attestations; environments ${env}.`,
        '',
        '  Start the server and open the console:',
        '',
        '    npm start',
        `    ${config.publicUrl}/`,
        '',
        '  Sign in with:',
        '',
        `    organization: ${summary.org}`,
        `    API key:      ${summary.apiKey}`,
        '',
        '  The key is shown only this once (only its hash is stored). Another one, any time:',
        `    npm run admin -- key create --org ${summary.org} --service-account ${DEMO_ACCOUNT}`,
        '',
        '',
      ].join('\n'),
    );
  } finally {
    await handle.close();
  }
}

main().catch((err: unknown) => {
  if (err instanceof DemoOrgExistsError) {
    process.stderr.write(
      [
        `The demo organization '${err.org}' already exists: nothing was changed.`,
        `  A new key to sign in with: npm run admin -- key create --org ${err.org} --service-account ${DEMO_ACCOUNT}`,
        '  Another demo organization:  npm run demo -- --org <name>',
        '  Start over: stop the server, remove the data directory (VERITY_DATA_DIR, default ./data), run npm run demo again.',
        '',
      ].join('\n'),
    );
  } else if (err instanceof UsageError || err instanceof ConfigError) {
    process.stderr.write(`error: ${err.message}\n`);
  } else {
    process.stderr.write(`demo failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  }
  process.exit(1);
});
