/** A reporter wired to an API server double and a recording receiver, with short timings. */
import type { EnvironmentConfig, ReporterConfig } from '../../services/reporter/src/config.js';
import type { DeliveredEvent, EvaluatedEvent } from '../../services/reporter/src/environment-loop.js';
import { Reporter } from '../../services/reporter/src/reporter.js';
import { ApiServerDouble } from './api-server-double.js';
import { RecordingReceiver } from './receiver.js';
import { nextEvent } from './wait.js';

export const KEY = 'reporter-test-key-0123456789';

/** An environment selecting namespaces as the config file does. */
export function environment(name: string, selection: Partial<EnvironmentConfig> = {}): EnvironmentConfig {
  return {
    name,
    namespaces: [],
    namespacesRegex: [],
    excludeNamespaces: [],
    excludeNamespacesRegex: [],
    labelSelector: undefined,
    ...selection,
  };
}

export interface LogEntry {
  level: string;
  msg: string;
  [k: string]: unknown;
}

export interface Scenario {
  double: ApiServerDouble;
  receiver: RecordingReceiver;
  reporter: Reporter;
  logs: LogEntry[];
  /** The next evaluation matching `predicate`. */
  evaluated(predicate?: (e: EvaluatedEvent) => boolean): Promise<EvaluatedEvent>;
  /** The next delivery outcome matching `predicate`. */
  delivered(predicate?: (e: DeliveredEvent) => boolean): Promise<DeliveredEvent>;
  close(): Promise<void>;
}

/**
 * Starts the double (with `setup` applied to it before the reporter lists), a receiver knowing
 * the environments, and the reporter; resolves once every environment's first report is accepted
 * (unless `waitForFirst` is false).
 */
export async function startScenario(options: {
  environments: EnvironmentConfig[];
  setup?: (double: ApiServerDouble) => void;
  config?: Partial<ReporterConfig>;
  knownEnvironments?: Record<string, string>;
  waitForFirst?: boolean;
}): Promise<Scenario> {
  const double = await new ApiServerDouble().start();
  options.setup?.(double);
  const receiver = await new RecordingReceiver('acme', KEY).start();
  for (const [name, type] of Object.entries(
    options.knownEnvironments ?? Object.fromEntries(options.environments.map((e) => [e.name, 'K8S'])),
  )) {
    receiver.environments.set(name, type);
  }
  const logs: LogEntry[] = [];
  const logAt =
    (level: string) =>
    (obj: object, msg: string): void => {
      logs.push({ level, msg, ...obj });
    };
  const config: ReporterConfig = {
    apiUrl: receiver.url,
    org: 'acme',
    token: { kind: 'value', value: KEY },
    environments: options.environments,
    debounceMs: 25,
    maxWaitMs: 250,
    heartbeatMs: 3_600_000,
    autoCreateEnvironments: false,
    environmentDescription: 'Auto-created by the Verity reporter',
    retryBaseMs: 20,
    retryMaxMs: 200,
    port: 0,
    host: '127.0.0.1',
    logLevel: 'silent',
    shutdownTimeoutMs: 1000,
    ...options.config,
  };
  const reporter = new Reporter({
    config,
    kubeConfig: double.kubeConfig(),
    log: { info: logAt('info'), warn: logAt('warn'), error: logAt('error'), debug: logAt('debug') },
    watchRestartBaseMs: 10,
  });
  const first =
    options.waitForFirst === false
      ? undefined
      : Promise.all(
          options.environments.map((e) =>
            nextEvent<[DeliveredEvent]>(
              reporter,
              'delivered',
              (d) => d.environment === e.name && d.result === 'accepted',
            ),
          ),
        );
  reporter.start();
  await first;
  return {
    double,
    receiver,
    reporter,
    logs,
    evaluated: (predicate = () => true) =>
      nextEvent<[EvaluatedEvent]>(reporter, 'evaluated', predicate).then(([e]) => e),
    delivered: (predicate = () => true) =>
      nextEvent<[DeliveredEvent]>(reporter, 'delivered', predicate).then(([e]) => e),
    async close() {
      await reporter.stop();
      await receiver.stop();
      await double.close();
    },
  };
}

/** The digests of a report body, as a sorted list of `image@digest`. */
export function digestsOf(body: { artifacts: Array<{ digests: Record<string, string> }> }): string[] {
  return [
    ...new Set(body.artifacts.flatMap((a) => Object.entries(a.digests).map(([i, d]) => `${i}@${d}`))),
  ].sort();
}
