/**
 * The API process: configuration, database, migrations, bootstrap, listen, graceful shutdown.
 */
import closeWithGrace from 'close-with-grace';
import { pino } from 'pino';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { loggerOptions } from './logger.js';
import { openDatabase } from './storage/create-db.js';
import { isDatabaseUnavailable, isUniqueViolation } from './storage/errors.js';
import { migrateToLatest } from './storage/migrate.js';
import { ensureBootstrap, type BootstrapResult } from './usecases/bootstrap.js';

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

async function main(): Promise<void> {
  const config = readConfig();
  const log = pino(loggerOptions(config.logLevel));
  if (config.databaseUrl) {
    // Migrations may wait for another replica's and may run long: on connections of their own,
    // without the statement timeout of requests.
    const setup = await openDatabase({ databaseUrl: config.databaseUrl, poolMax: 2 });
    try {
      const applied = await migrateToLatest(setup);
      if (applied.length > 0) log.info({ migrations: applied }, 'migrations applied');
    } finally {
      await setup.close();
    }
  }
  const handle = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolMax: config.dbPoolMax,
    preparedStatements: config.dbPreparedStatements,
    statementTimeoutMs: config.dbStatementTimeoutMs,
    connectTimeoutMs: config.dbConnectTimeoutMs,
  });
  log.info(
    { database: handle.dialect === 'postgres' ? 'postgresql' : `embedded (${config.dataDir})` },
    'database opened',
  );
  if (handle.dialect === 'pglite') {
    const applied = await migrateToLatest(handle);
    if (applied.length > 0) log.info({ migrations: applied }, 'migrations applied');
  }

  let boot: BootstrapResult;
  try {
    boot = await ensureBootstrap(handle.db, {
      orgName: config.bootstrapOrg,
      apiKey: config.bootstrapApiKey,
      now: new Date(),
    });
  } catch (err) {
    // Another replica bootstrapped in the same instant: its result is ours.
    if (!isUniqueViolation(err)) throw err;
    boot = await ensureBootstrap(handle.db, {
      orgName: config.bootstrapOrg,
      apiKey: config.bootstrapApiKey,
      now: new Date(),
    });
  }
  if (boot.orgCreated) log.info({ org: boot.org }, 'bootstrap organization created');
  if (boot.configuredKeyCreated)
    log.info({ org: boot.org }, 'bootstrap API key registered (VERITY_BOOTSTRAP_API_KEY)');

  const app = await buildApp({ config, database: handle, logger: loggerOptions(config.logLevel) });
  app.addHook('onClose', async () => handle.close());

  const grace = closeWithGrace(
    { delay: config.shutdownTimeoutMs, skip: ['uncaughtException', 'unhandledRejection'] },
    async ({ signal }) => {
      app.log.info({ signal }, 'shutting down');
      await app.close();
    },
  );
  // A database outage is not a reason to exit: requests answer 503 and workers back off until it
  // is back. Connection errors are all handled where they arise; should one still escape, it is
  // logged and the process goes on. Any other unexpected error ends the process (after a
  // graceful close), as the state it leaves is unknown.
  let failing = false;
  const onUnexpected = (err: unknown) => {
    if (isDatabaseUnavailable(err)) {
      app.log.warn({ err }, 'database connection lost');
      return;
    }
    if (failing) process.exit(1);
    failing = true;
    grace.uninstall();
    app.log.error({ err }, 'shutting down after an error');
    setTimeout(() => process.exit(1), config.shutdownTimeoutMs).unref();
    void app.close().finally(() => process.exit(1));
  };
  process.on('uncaughtException', onUnexpected);
  process.on('unhandledRejection', onUnexpected);

  await app.listen({ port: config.port, host: config.host });
  // Metrics name every organization: their own port, which the Service of the API does not expose.
  await app.metrics.server.listen({ port: config.metricsPort, host: config.host });
  app.log.info({ port: config.metricsPort }, 'metrics listening');
  if (boot.generatedKey) {
    // Shown once, on the terminal and in the log of the first start; only its hash is stored.
    const url = `${config.publicUrl}/api/v2/organizations/${boot.org}`;
    process.stdout.write(
      [
        '',
        '  Verity is ready. A first organization and admin API key were created:',
        '',
        `    organization: ${boot.org}`,
        `    API key:      ${boot.generatedKey}`,
        '',
        '  The key is shown only this once. Try it:',
        '',
        `    curl -H 'Authorization: Bearer ${boot.generatedKey}' ${url}`,
        '',
        '',
      ].join('\n'),
    );
  }
}

main().catch((err: unknown) => {
  process.stderr.write(
    `Verity failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
