/**
 * The reporter process: configuration (bad configuration exits 1 listing every problem), the
 * Kubernetes client (KUBECONFIG when set, in-cluster config inside a pod, else ~/.kube/config),
 * the watches and report loops, /healthz /readyz /metrics on VERITY_REPORTER_PORT, and a graceful
 * shutdown on SIGTERM.
 */
import { once } from 'node:events';
import { KubeConfig } from '@kubernetes/client-node';
import closeWithGrace from 'close-with-grace';
import { pino } from 'pino';
import { ConfigError, loadReporterConfig, type ReporterConfig } from './config.js';
import { createOpsServer } from './http-server.js';
import { Reporter } from './reporter.js';

function readConfig(): ReporterConfig {
  try {
    return loadReporterConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

function kubeConfig(): { kc: KubeConfig; source: string } {
  const kc = new KubeConfig();
  if (process.env.KUBECONFIG) {
    kc.loadFromDefault();
    return { kc, source: `KUBECONFIG (${process.env.KUBECONFIG})` };
  }
  if (process.env.KUBERNETES_SERVICE_HOST) {
    kc.loadFromCluster();
    return { kc, source: 'in-cluster service account' };
  }
  kc.loadFromDefault();
  return { kc, source: '~/.kube/config' };
}

async function main(): Promise<void> {
  const config = readConfig();
  const log = pino({
    level: config.logLevel,
    base: { service: 'verity-reporter' },
    ...(process.stdout.isTTY
      ? {
          transport: {
            target: 'pino-pretty',
            options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' },
          },
        }
      : {}),
  });
  const { kc, source } = kubeConfig();
  log.info(
    { kubeconfig: source, cluster: kc.getCurrentCluster()?.server, api: config.apiUrl, org: config.org },
    'starting',
  );

  const reporter = new Reporter({ config, kubeConfig: kc, log });
  const server = createOpsServer({ ready: () => reporter.ready, registry: reporter.metrics.registry });

  closeWithGrace({ delay: config.shutdownTimeoutMs }, async ({ signal, err }) => {
    if (err) log.error({ err }, 'shutting down after an error');
    else log.info({ signal }, 'shutting down');
    await reporter.stop();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  server.listen(config.port, config.host);
  await once(server, 'listening');
  const address = server.address();
  log.info(
    { port: typeof address === 'object' && address ? address.port : config.port },
    'ops server listening',
  );
  reporter.start();
}

main().catch((err: unknown) => {
  process.stderr.write(
    `Verity reporter failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
