/**
 * The API process: configuration, database, migrations, bootstrap, listen, graceful shutdown.
 */
import closeWithGrace from 'close-with-grace';
import { pino } from 'pino';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildApp, openConfiguredDatabase } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { startWaitingServer, untilDatabase } from './database-wait.js';
import { loggerOptions } from './logger.js';
import { openDatabase, type DatabaseHandle } from './storage/create-db.js';
import { isDatabaseUnavailable, isUniqueViolation } from './storage/errors.js';
import { migrateToLatest } from './storage/migrate.js';
import { describeTrustProxy } from './trust-proxy.js';
import { ensureBootstrap, type BootstrapResult } from './usecases/access/bootstrap.js';

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

type Log = Pick<FastifyBaseLogger, 'info'>;

/** Opens the configured database, migrated to the latest schema. */
async function openMigrated(config: Config, log: Log): Promise<DatabaseHandle> {
  const migrate = async (handle: DatabaseHandle) => {
    const applied = await migrateToLatest(handle, { transparencyLog: config.transparencyLog });
    if (applied.length > 0) {
      log.info({ migrations: applied }, 'migrations applied');
    }
  };
  if (config.databaseUrl) {
    // Migrations may wait for another replica's and may run long: on connections of their own,
    // without the statement timeout of requests.
    const setup = await openDatabase({ databaseUrl: config.databaseUrl, poolMax: 2 });
    try {
      await migrate(setup);
    } finally {
      await setup.close();
    }
  }
  const handle = await openConfiguredDatabase(config);
  log.info(
    { database: handle.dialect === 'postgres' ? 'postgresql' : `embedded (${config.dataDir})` },
    'database opened',
  );
  if (handle.dialect === 'pglite') {
    await migrate(handle);
  }
  return handle;
}

/** The first organization and key, when the configuration or a first start asks for them. */
async function bootstrap(handle: DatabaseHandle, config: Config, log: Log): Promise<BootstrapResult> {
  const ensure = () =>
    ensureBootstrap(handle.db, {
      orgName: config.bootstrapOrg,
      apiKey: config.bootstrapApiKey,
      now: new Date(),
    });
  let boot: BootstrapResult;
  try {
    boot = await ensure();
  } catch (err) {
    // Another replica bootstrapped in the same instant: its result is ours.
    if (!isUniqueViolation(err)) {
      throw err;
    }
    boot = await ensure();
  }
  if (boot.orgCreated) {
    log.info({ org: boot.org }, 'bootstrap organization created');
  }
  if (boot.configuredKeyCreated) {
    log.info({ org: boot.org }, 'bootstrap API key registered (VERITY_BOOTSTRAP_API_KEY)');
  }
  return boot;
}

interface Started {
  handle: DatabaseHandle;
  boot: BootstrapResult;
}

/** The database opened, migrated and bootstrapped; closed again when a step fails. */
async function openAndBootstrap(config: Config, log: Log): Promise<Started> {
  const handle = await openMigrated(config, log);
  try {
    return { handle, boot: await bootstrap(handle, config, log) };
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw err;
  }
}

/**
 * PostgreSQL may not be there yet (a cluster restarting with the API): the process waits for it
 * with backoff, answering the probes on its port meanwhile (`/readyz` says why it is not ready),
 * and goes on once it answers. SIGTERM or SIGINT while waiting ends the process.
 */
async function waitForDatabase(config: Config, log: Log & Pick<FastifyBaseLogger, 'warn' | 'error'>) {
  const waiting = await startWaitingServer(config.host, config.port);
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    log.info({ signal }, 'shutting down while waiting for the database');
    stop.abort();
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  let started: Started | undefined;
  try {
    started = await untilDatabase(() => openAndBootstrap(config, log), {
      log,
      onFailure: (message) => waiting.setReason(message),
      signal: stop.signal,
    });
  } catch (err) {
    if (!stop.signal.aborted) {
      throw err;
    }
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    await waiting.close();
  }
  if (!started || stop.signal.aborted) {
    await started?.handle.close();
    process.exit(0);
  }
  return started;
}

/** Closes the app on SIGTERM and SIGINT, and decides what an error nothing caught does. */
function handleShutdown(app: FastifyInstance, config: Config): void {
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
    if (failing) {
      process.exit(1);
    }
    failing = true;
    grace.uninstall();
    app.log.error({ err }, 'shutting down after an error');
    setTimeout(() => process.exit(1), config.shutdownTimeoutMs).unref();
    void app.close().finally(() => process.exit(1));
  };
  process.on('uncaughtException', onUnexpected);
  process.on('unhandledRejection', onUnexpected);
}

/** The key a first start generated, shown once on the terminal; only its hash is stored. */
function showGeneratedKey(config: Config, org: string | undefined, key: string): void {
  const url = `${config.publicUrl}/api/v2/organizations/${org}`;
  process.stdout.write(
    [
      '',
      '  Verity is ready. A first organization and admin API key were created:',
      '',
      `    organization: ${org}`,
      `    API key:      ${key}`,
      '',
      '  The key is shown only this once. Try it:',
      '',
      `    curl -H 'Authorization: Bearer ${key}' ${url}`,
      '',
      '',
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  const config = readConfig();
  const log = pino(loggerOptions(config.logLevel));
  const { handle, boot } = config.databaseUrl
    ? await waitForDatabase(config, log)
    : await openAndBootstrap(config, log);

  const app = await buildApp({ config, database: handle, logger: loggerOptions(config.logLevel) });
  app.addHook('onClose', async () => handle.close());
  handleShutdown(app, config);
  const trust = describeTrustProxy(config.trustProxy);
  if (config.trustProxy.kind === 'hops' && config.trustProxy.fromTrue) {
    app.log.warn({ trustProxy: 1 }, trust);
  } else {
    app.log.info({ trustProxy: config.trustProxy }, trust);
  }

  await app.listen({ port: config.port, host: config.host });
  // Metrics name every organization: their own port, which the Service of the API does not expose.
  await app.metrics.server.listen({ port: config.metricsPort, host: config.metricsHost });
  app.log.info(
    { host: config.metricsHost, port: config.metricsPort, token: config.metricsToken !== undefined },
    'metrics listening',
  );
  if (boot.generatedKey) {
    showGeneratedKey(config, boot.org, boot.generatedKey);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(
    `Verity failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
