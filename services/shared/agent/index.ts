/**
 * What the in-cluster programs (reporter and operator) share as processes: configuration that
 * exits 1 listing every problem, the Kubernetes client from the environment, JSON logs, the
 * /healthz /readyz /metrics server, and a graceful shutdown on SIGTERM.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';
import closeWithGrace from 'close-with-grace';
import { pino, type Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { LogLevel, SecretSource } from '../config.js';

/** A server answering the three operational paths; anything else is 404. */
export function createOpsServer(options: {
  ready: () => boolean;
  registry: Registry;
  /** The body of a 503 from /readyz, e.g. "pods not listed yet". */
  notReady: string;
}): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const reply = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return reply(405, 'method not allowed\n');
    }
    if (path === '/healthz') {
      return reply(200, 'ok\n');
    }
    if (path === '/readyz') {
      return options.ready() ? reply(200, 'ready\n') : reply(503, `not ready: ${options.notReady}\n`);
    }
    if (path === '/metrics') {
      options.registry.metrics().then(
        (text) => reply(200, text, options.registry.contentType),
        (err: Error) => reply(500, `${err.message}\n`),
      );
      return;
    }
    reply(404, 'not found\n');
  });
}

/** KUBECONFIG when set, the in-cluster service account inside a pod, else ~/.kube/config. */
export function kubeConfigFromEnvironment(): { kc: KubeConfig; source: string } {
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

/** What both in-cluster programs are configured with. */
export interface AgentConfig {
  logLevel: LogLevel;
  port: number;
  host: string;
  shutdownTimeoutMs: number;
  apiUrl: string;
  org: string;
  /** Where the API key comes from; a file is read again on every request, so a rotated Secret works. */
  token: SecretSource;
  /** First and longest retry delay after a retryable failure. */
  retryBaseMs: number;
  retryMaxMs: number;
}

export interface AgentProgram {
  readonly ready: boolean;
  readonly metrics: { registry: Registry };
  start(): void;
  stop(): Promise<void>;
}

/**
 * Runs an in-cluster program as a process: bad configuration (`isConfigError`) exits 1 with its
 * message; then logs, the Kubernetes client, the ops server, and `start`; SIGTERM stops the
 * program within the configured grace period.
 */
export function runAgent<C extends AgentConfig>(options: {
  name: 'reporter' | 'operator';
  loadConfig: () => C;
  isConfigError: (err: unknown) => boolean;
  notReady: string;
  /** Extra fields of the "starting" log line. */
  describe?: (config: C) => Record<string, unknown>;
  create: (deps: { config: C; kubeConfig: KubeConfig; log: Logger }) => AgentProgram;
}): void {
  const main = async () => {
    let config: C;
    try {
      config = options.loadConfig();
    } catch (err) {
      if (!options.isConfigError(err)) {
        throw err;
      }
      process.stderr.write(`${(err as Error).message}\n`);
      process.exit(1);
    }
    const log = pino({
      level: config.logLevel,
      base: { service: `verity-${options.name}` },
      ...(process.stdout.isTTY
        ? {
            transport: {
              target: 'pino-pretty',
              options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' },
            },
          }
        : {}),
    });
    const { kc, source } = kubeConfigFromEnvironment();
    log.info(
      {
        kubeconfig: source,
        cluster: kc.getCurrentCluster()?.server,
        api: config.apiUrl,
        org: config.org,
        ...options.describe?.(config),
      },
      'starting',
    );
    const program = options.create({ config, kubeConfig: kc, log });
    const server = createOpsServer({
      ready: () => program.ready,
      registry: program.metrics.registry,
      notReady: options.notReady,
    });
    closeWithGrace({ delay: config.shutdownTimeoutMs }, async ({ signal, err }) => {
      if (err) {
        log.error({ err }, 'shutting down after an error');
      } else {
        log.info({ signal }, 'shutting down');
      }
      await program.stop();
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
    program.start();
  };
  main().catch((err: unknown) => {
    process.stderr.write(
      `Verity ${options.name} failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  });
}
