/**
 * The operator process: configuration (bad configuration exits 1 listing every problem), the
 * Kubernetes client (KUBECONFIG when set, in-cluster config inside a pod, else ~/.kube/config),
 * the informers and workers, /healthz /readyz /metrics on VERITY_OPERATOR_PORT, and a graceful
 * shutdown on SIGTERM (reconciles in flight finish, nothing new starts).
 */
import { runAgent } from '../../shared/agent/index.js';
import { ConfigError, loadOperatorConfig } from './config.js';
import { Operator } from './operator.js';

runAgent({
  name: 'operator',
  loadConfig: () => loadOperatorConfig(),
  isConfigError: (err) => err instanceof ConfigError,
  notReady: 'custom resources not listed yet',
  // namespace -> organization; resources of any other namespace are never listed.
  describe: (config) => ({
    namespaces: config.clusterWide
      ? { '*': config.org }
      : Object.fromEntries([
          ...config.watchNamespaces.map((ns) => [ns, config.org]),
          ...(config.namespaces ?? []).map((n) => [n.namespace, n.org]),
        ]),
  }),
  create: ({ config, kubeConfig, log }) => new Operator({ config, kubeConfig, log }),
});
