/**
 * Operator configuration from environment variables, parsed once with zod; every bad variable is
 * reported at once.
 */
import { hostname } from 'node:os';
import { z } from 'zod';
import {
  ConfigError,
  intVar as sharedIntVar,
  LOG_LEVEL_PROBLEM,
  LOG_LEVELS,
  readApiToken,
  readTextFile,
  secretReader,
  type ReadFile,
  type SecretSource,
} from '../../shared/config.js';
import type { AgentConfig } from '../../shared/agent/index.js';
import { ORG_NAME_PATTERN } from '../../shared/contract/common.js';
import type { LeaderElectionConfig } from './leader-election.js';

/** Where the API key comes from; a file is read again on every request, so a rotated Secret works. */
export type TokenSource = SecretSource;

/** A watched namespace reconciled into an organization of its own, with a key of its own. */
export interface NamespaceOrg {
  namespace: string;
  org: string;
  token: TokenSource;
}

/** The parsed configuration of the operator process. */
export interface OperatorConfig extends AgentConfig {
  /** Watch every namespace, each reconciled into `org` with `token` (VERITY_WATCH_NAMESPACES=*). */
  clusterWide: boolean;
  /** Namespaces whose resources are reconciled into `org` with `token`. */
  watchNamespaces: string[];
  /** Namespaces each reconciled into its own organization with its own key (VERITY_OPERATOR_NAMESPACES). */
  namespaces?: NamespaceOrg[];
  /** Secrets Actions may reference without the opt-in label (VERITY_SECRET_NAMES). */
  secretNames?: string[];
  /** A resource that matches Verity is looked at again this long after, to repair drift. */
  requeueIntervalMs: number;
  /** Reconciles running at once (never two for one resource). */
  workers: number;
  /** Set when replicas elect a leader through a Lease; only the leader reconciles. */
  leaderElection?: LeaderElectionConfig;
}

export { ConfigError };

/** An unset or blank variable is absent. */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), schema.optional());

/** The operator's integers: decimal digits only, and the problem does not repeat the value. */
const intVar = (def: number, min: number, max: number) =>
  sharedIntVar(def, min, max, { digitsOnly: true, echo: false });

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** One entry of VERITY_OPERATOR_NAMESPACES: the chart writes one per operator.namespaces item. */
const NamespaceEntry = z.strictObject({
  namespace: z.string().max(63).regex(DNS_LABEL, 'must be a namespace name'),
  org: z.string().regex(ORG_NAME_PATTERN, `must match ${ORG_NAME_PATTERN.source}`),
  tokenFile: z.string().trim().min(1, "required (the file holding this namespace's key)"),
});

const Env = z.object({
  VERITY_API_URL: z
    .string({ error: 'required (the Verity server, e.g. http://verity:8080)' })
    .trim()
    .min(1, 'required (the Verity server, e.g. http://verity:8080)')
    .refine((v) => {
      try {
        return ['http:', 'https:'].includes(new URL(v).protocol);
      } catch {
        return false;
      }
    }, 'must be an http or https URL'),
  VERITY_ORG: z
    .string({ error: 'required (the organization the resources belong to)' })
    .trim()
    .min(1, 'required (the organization the resources belong to)')
    .regex(ORG_NAME_PATTERN, `must match ${ORG_NAME_PATTERN.source}`),
  VERITY_WATCH_NAMESPACES: optional(
    z
      .string()
      .transform((v) =>
        v
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== ''),
      )
      .refine(
        (list) =>
          (list.length === 1 && list[0] === '*') || list.every((ns) => ns.length <= 63 && DNS_LABEL.test(ns)),
        { message: 'must be a comma list of namespace names, or * for every namespace' },
      ),
  ),
  VERITY_OPERATOR_NAMESPACES: optional(
    z
      .string()
      .transform((v, ctx) => {
        try {
          return JSON.parse(v) as unknown;
        } catch {
          ctx.addIssue({ code: 'custom', message: 'must be a JSON list of {namespace, org, tokenFile}' });
          return z.NEVER;
        }
      })
      .pipe(z.array(NamespaceEntry, { error: 'must be a JSON list of {namespace, org, tokenFile}' })),
  ),
  VERITY_SECRET_NAMES: optional(
    z.string().transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    ),
  ),
  VERITY_REQUEUE_INTERVAL_SECONDS: intVar(300, 1, 86_400),
  VERITY_OPERATOR_WORKERS: intVar(4, 1, 64),
  VERITY_RETRY_MAX_DELAY_MS: intVar(300_000, 1000, 3_600_000),
  VERITY_OPERATOR_PORT: intVar(8082, 0, 65_535),
  VERITY_OPERATOR_HOST: optional(z.string().trim()),
  VERITY_SHUTDOWN_TIMEOUT_MS: intVar(10_000, 0, 600_000),
  LOG_LEVEL: optional(z.enum(LOG_LEVELS, { error: LOG_LEVEL_PROBLEM })),
  VERITY_LEADER_ELECTION: optional(
    z
      .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
      .transform((v) => v === 'true' || v === '1'),
  ),
  VERITY_LEADER_ELECTION_LEASE_NAME: optional(
    z.string().trim().max(253).regex(DNS_LABEL, 'must be a DNS label (the Lease name)'),
  ),
  VERITY_LEADER_ELECTION_NAMESPACE: optional(
    z.string().trim().max(63).regex(DNS_LABEL, 'must be a namespace name'),
  ),
  VERITY_POD_NAME: optional(z.string().trim().max(253)),
  VERITY_LEASE_DURATION_SECONDS: intVar(15, 2, 3600),
  VERITY_LEASE_RENEW_DEADLINE_SECONDS: intVar(10, 1, 3600),
  VERITY_LEASE_RETRY_PERIOD_SECONDS: intVar(2, 1, 3600),
});

/** The namespace a pod runs in, from its service account mount. */
function podNamespace(readFile: ReadFile): string | undefined {
  try {
    return readFile('/var/run/secrets/kubernetes.io/serviceaccount/namespace').trim() || undefined;
  } catch {
    return undefined;
  }
}

type Scope = Pick<OperatorConfig, 'clusterWide' | 'watchNamespaces' | 'namespaces'>;

/**
 * What the operator watches: VERITY_WATCH_NAMESPACES (`*`: every namespace) into VERITY_ORG, and
 * each namespace of VERITY_OPERATOR_NAMESPACES into its own organization; with neither, the pod's
 * own namespace. A namespace maps to one organization, so none may be listed twice.
 */
function watchScope(d: z.infer<typeof Env>, readFile: ReadFile, problems: string[]): Scope {
  const listed = d.VERITY_WATCH_NAMESPACES ?? [];
  const clusterWide = listed[0] === '*';
  const entries = d.VERITY_OPERATOR_NAMESPACES ?? [];
  if (clusterWide && entries.length > 0) {
    problems.push(
      'VERITY_OPERATOR_NAMESPACES: cannot be combined with VERITY_WATCH_NAMESPACES=*, which reconciles every namespace into VERITY_ORG',
    );
  }
  const seen = new Set<string>();
  for (const ns of [...(clusterWide ? [] : listed), ...entries.map((e) => e.namespace)]) {
    if (seen.has(ns)) {
      problems.push(
        `VERITY_OPERATOR_NAMESPACES: namespace ${ns} is listed twice (it maps to one organization)`,
      );
    }
    seen.add(ns);
  }
  const namespaces = entries.map((e): NamespaceOrg => {
    try {
      if (readFile(e.tokenFile).trim() === '') {
        problems.push(`VERITY_OPERATOR_NAMESPACES: ${e.namespace}: '${e.tokenFile}' is empty`);
      }
    } catch (err) {
      problems.push(
        `VERITY_OPERATOR_NAMESPACES: ${e.namespace}: cannot read '${e.tokenFile}': ${(err as Error).message}`,
      );
    }
    return { namespace: e.namespace, org: e.org, token: { kind: 'file', path: e.tokenFile } };
  });
  let watchNamespaces = clusterWide ? [] : listed;
  if (!clusterWide && listed.length === 0 && entries.length === 0) {
    const own = podNamespace(readFile);
    if (own) {
      watchNamespaces = [own];
    } else {
      problems.push(
        'VERITY_WATCH_NAMESPACES: required outside a pod (a comma list of namespaces, or * for every namespace)',
      );
    }
  }
  return { clusterWide, watchNamespaces, namespaces };
}

/** Parses the operator's environment; throws {@link ConfigError} with every problem. */
export function loadOperatorConfig(
  env: Record<string, string | undefined> = process.env,
  readFile: ReadFile = readTextFile,
): OperatorConfig {
  const parsed = Env.safeParse(env);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map(
        (i) =>
          `${String(i.path[0] ?? 'environment')}: ${i.path.length > 1 ? `${i.path.slice(1).join('.')}: ` : ''}${i.message}`,
      );

  // The key is checked whatever else is wrong, so every problem shows at once.
  const token = readApiToken(
    env.VERITY_API_TOKEN?.trim(),
    env.VERITY_API_TOKEN_FILE?.trim(),
    readFile,
    problems,
  );
  let leaderElection: LeaderElectionConfig | undefined;
  if (parsed.success && parsed.data.VERITY_LEADER_ELECTION) {
    const d = parsed.data;
    const namespace = d.VERITY_LEADER_ELECTION_NAMESPACE ?? podNamespace(readFile);
    if (!namespace) {
      problems.push(
        'VERITY_LEADER_ELECTION_NAMESPACE: required with leader election outside a pod (where the Lease lives)',
      );
    }
    // client-go's rules: a leader gives up before its Lease expires, and tries more than once meanwhile.
    if (d.VERITY_LEASE_RENEW_DEADLINE_SECONDS >= d.VERITY_LEASE_DURATION_SECONDS) {
      problems.push('VERITY_LEASE_RENEW_DEADLINE_SECONDS: must be less than VERITY_LEASE_DURATION_SECONDS');
    }
    if (d.VERITY_LEASE_RETRY_PERIOD_SECONDS >= d.VERITY_LEASE_RENEW_DEADLINE_SECONDS) {
      problems.push(
        'VERITY_LEASE_RETRY_PERIOD_SECONDS: must be less than VERITY_LEASE_RENEW_DEADLINE_SECONDS',
      );
    }
    leaderElection = {
      leaseName: d.VERITY_LEADER_ELECTION_LEASE_NAME ?? 'verity-operator',
      leaseNamespace: namespace ?? '',
      identity: d.VERITY_POD_NAME ?? hostname(),
      leaseDurationMs: d.VERITY_LEASE_DURATION_SECONDS * 1000,
      renewDeadlineMs: d.VERITY_LEASE_RENEW_DEADLINE_SECONDS * 1000,
      retryPeriodMs: d.VERITY_LEASE_RETRY_PERIOD_SECONDS * 1000,
    };
  }
  const scope = parsed.success ? watchScope(parsed.data, readFile, problems) : undefined;
  if (!parsed.success || !scope || problems.length > 0) {
    throw new ConfigError(problems, 'operator');
  }
  const d = parsed.data;
  return {
    apiUrl: d.VERITY_API_URL.replace(/\/+$/, ''),
    org: d.VERITY_ORG,
    token,
    ...scope,
    secretNames: d.VERITY_SECRET_NAMES ?? [],
    requeueIntervalMs: d.VERITY_REQUEUE_INTERVAL_SECONDS * 1000,
    workers: d.VERITY_OPERATOR_WORKERS,
    retryBaseMs: 1000,
    retryMaxMs: d.VERITY_RETRY_MAX_DELAY_MS,
    port: d.VERITY_OPERATOR_PORT,
    host: d.VERITY_OPERATOR_HOST ?? '0.0.0.0',
    logLevel: d.LOG_LEVEL ?? 'info',
    shutdownTimeoutMs: d.VERITY_SHUTDOWN_TIMEOUT_MS,
    leaderElection,
  };
}

/** The API key as the client reads it: the value, or the file's content read on each request. */
export const tokenReader = secretReader;
