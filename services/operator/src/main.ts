/**
 * The operator process: configuration (bad configuration exits 1 listing every problem), the
 * Kubernetes client (KUBECONFIG when set, in-cluster config inside a pod, else ~/.kube/config),
 * the informers and workers, /healthz /readyz /metrics on VERITY_OPERATOR_PORT, and a graceful
 * shutdown on SIGTERM (reconciles in flight finish, nothing new starts).
 */
import { once } from 'node:events';
import { KubeConfig } from '@kubernetes/client-node';
import closeWithGrace from 'close-with-grace';
import { pino } from 'pino';
import { ConfigError, loadOperatorConfig, type OperatorConfig } from './config.js';
import { createOpsServer } from './http-server.js';
import { Operator } from './operator.js';

function readConfig(): OperatorConfig {
  try {
    return loadOperatorConfig();
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
    base: { service: 'verity-operator' },
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
    {
      kubeconfig: source,
      cluster: kc.getCurrentCluster()?.server,
      api: config.apiUrl,
      org: config.org,
      namespaces: config.watchNamespaces.length > 0 ? config.watchNamespaces : '*',
    },
    'starting',
  );

  const operator = new Operator({ config, kubeConfig: kc, log });
  const server = createOpsServer({ ready: () => operator.ready, registry: operator.metrics.registry });

  closeWithGrace({ delay: config.shutdownTimeoutMs }, async ({ signal, err }) => {
    if (err) log.error({ err }, 'shutting down after an error');
    else log.info({ signal }, 'shutting down');
    await operator.stop();
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
  operator.start();
}

main().catch((err: unknown) => {
  process.stderr.write(
    `Verity operator failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
