/**
 * The reporter process: configuration (bad configuration exits 1 listing every problem), the
 * Kubernetes client (KUBECONFIG when set, in-cluster config inside a pod, else ~/.kube/config),
 * the watches and report loops, /healthz /readyz /metrics on VERITY_REPORTER_PORT, and a graceful
 * shutdown on SIGTERM.
 */
import { runAgent } from '../../shared/agent/index.js';
import { ConfigError, loadReporterConfig } from './config.js';
import { Reporter } from './reporter.js';

runAgent({
  name: 'reporter',
  loadConfig: () => loadReporterConfig(),
  isConfigError: (err) => err instanceof ConfigError,
  notReady: 'pods not listed yet',
  create: ({ config, kubeConfig, log }) => new Reporter({ config, kubeConfig, log }),
});
