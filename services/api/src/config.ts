/**
 * Process configuration, parsed once from the environment with zod.
 * Every bad variable is reported at once; secrets may come from files (`NAME_FILE`).
 */
import { z } from 'zod';
import {
  boolVar,
  ConfigError,
  intVar,
  LOG_LEVELS,
  readSecret,
  readTextFile,
  type LogLevel,
  type ReadFile,
  zodVar,
} from '../../shared/config.js';
import { OrgName } from '../../shared/contract/common.js';
import { checkOidc, parseIssuerList, readGroupRoles, type OidcConfig } from './config-people.js';
import { parseOutboundAllowList, type OutboundAllowList } from './domain/outbound-address.js';
import { readTrustProxy, type TrustProxy } from './trust-proxy.js';
import type { S3Settings } from './object-store/s3-evidence-store.js';
import { checkObjectStore, OBJECT_STORE_VARIABLES, s3SettingsOf } from './config-object-store.js';
import { buildSignatureTrust, SignatureTrustError } from './workers/signed-evidence.mjs';
import { evaluationSettings, logSettings, retentionConfigOf, runtimeSettings } from './config-sections.js';

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

const urlVar = (protocols: string[]) =>
  optionalString.refine(
    (v) => {
      if (v === undefined) {
        return true;
      }
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    { message: `must be a URL (${protocols.join(', ')})` },
  );

/** A Sigstore trusted root or keyed-signature keys file (JSON), refused when it cannot be used. */
const signatureTrustVar = (which: 'root' | 'keys') =>
  optionalString.superRefine((v, ctx) => {
    if (v === undefined) {
      return;
    }
    try {
      buildSignatureTrust(which === 'root' ? v : undefined, which === 'keys' ? v : undefined);
    } catch (err) {
      if (!(err instanceof SignatureTrustError)) {
        throw err;
      }
      ctx.addIssue({ code: 'custom', message: err.message });
    }
  });

const EnvSchema = z
  .object({
    PORT: intVar(8080, 0, 65535),
    HOST: optionalString.transform((v) => v ?? '0.0.0.0'),
    VERITY_METRICS_PORT: intVar(9464, 0, 65535),
    VERITY_METRICS_HOST: optionalString,
    VERITY_METRICS_TOKEN: optionalString.refine((v) => v === undefined || v.length >= 16, {
      message: 'must be at least 16 characters',
    }),
    DATABASE_URL: urlVar(['postgres:', 'postgresql:']),
    VERITY_DB_POOL_MAX: intVar(10, 1, 500),
    VERITY_DB_PREPARED_STATEMENTS: boolVar(true),
    VERITY_DB_STATEMENT_TIMEOUT_MS: intVar(15_000, 0, 3_600_000),
    VERITY_DB_CONNECT_TIMEOUT_MS: intVar(5_000, 100, 600_000),
    VERITY_DATA_DIR: optionalString.transform((v) => v ?? './data'),
    LOG_LEVEL: z.enum(LOG_LEVELS).optional().default('info'),
    VERITY_BOOTSTRAP_ORG: optionalString.pipe(OrgName.optional()),
    VERITY_BOOTSTRAP_API_KEY: optionalString.refine((v) => v === undefined || v.length >= 20, {
      message: 'must be at least 20 characters',
    }),
    VERITY_PUBLIC_URL: urlVar(['http:', 'https:']),
    VERITY_BACKUP_ORG: optionalString.pipe(OrgName.optional()),
    VERITY_BODY_LIMIT_BYTES: intVar(10 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    VERITY_UPLOAD_LIMIT_BYTES: intVar(10 * 1024 * 1024, 1024, 4 * 1024 * 1024 * 1024),
    VERITY_EVIDENCE_MAX_BYTES: intVar(0, 1024, 4 * 1024 * 1024 * 1024),
    ...OBJECT_STORE_VARIABLES,
    VERITY_SBOM_MAX_COMPONENTS: intVar(20_000, 1, 200_000),
    VERITY_SBOM_MAX_VERSIONS: intVar(100, 1, 200_000),
    VERITY_JQ_TIMEOUT_MS: intVar(2000, 10, 60_000),
    VERITY_JQ_MAX_HEAP_MB: intVar(64, 16, 4096),
    VERITY_JQ_WORKERS: intVar(2, 1, 64),
    VERITY_JQ_QUEUE_PER_ORG: intVar(20, 1, 10_000),
    VERITY_EVALUATIONS_ENABLED: boolVar(true),
    VERITY_CEL_TIMEOUT_MS: intVar(2000, 10, 60_000),
    VERITY_CEL_MAX_HEAP_MB: intVar(64, 16, 4096),
    VERITY_CEL_WORKERS: intVar(2, 1, 64),
    VERITY_EVALUATIONS_POLL_MS: intVar(5000, 100, 3_600_000),
    VERITY_TRANSPARENCY_LOG: boolVar(true),
    VERITY_LOG_SIGNING_KEY: optionalString.refine(
      (v) => v === undefined || v.includes('-----BEGIN PRIVATE KEY-----'),
      {
        message: 'must hold PEM Ed25519 private keys (-----BEGIN PRIVATE KEY-----)',
      },
    ),
    VERITY_ENCRYPTION_SECRET: optionalString.refine((v) => v === undefined || v.length >= 32, {
      message: 'must be at least 32 characters (for instance: openssl rand -base64 32)',
    }),
    VERITY_LOG_SEQUENCE_MS: intVar(250, 10, 60_000),
    VERITY_LOG_SELF_CHECK_MS: intVar(600_000, 1_000, 86_400_000),
    VERITY_LOG_SELF_CHECK_SAMPLE: intVar(100, 1, 100_000),
    VERITY_RATE_LIMIT_PER_MINUTE: intVar(3000, 0, 10_000_000),
    VERITY_AUTH_FAILURES_PER_MINUTE: intVar(60, 0, 10_000_000),
    // Unset: ten times the per-key limit (the default's default is 30,000).
    VERITY_RATE_LIMIT_PER_ORG_PER_MINUTE: intVar(-1, 0, 100_000_000),
    VERITY_MAX_SERVICE_ACCOUNTS_PER_ORG: intVar(500, 1, 1_000_000),
    VERITY_MAX_ACTIVE_KEYS_PER_ORG: intVar(2000, 1, 1_000_000),
    VERITY_SHUTDOWN_TIMEOUT_MS: intVar(10_000, 0, 600_000),
    VERITY_TRUST_PROXY: zodVar(readTrustProxy),
    VERITY_NOTIFIER_ENABLED: boolVar(true),
    VERITY_NOTIFIER_POLL_MS: intVar(1000, 50, 3_600_000),
    VERITY_NOTIFIER_MAX_ATTEMPTS: intVar(10, 1, 100),
    VERITY_NOTIFIER_LEASE_MS: intVar(60_000, 1_000, 3_600_000),
    VERITY_NOTIFICATION_RETENTION_DAYS: intVar(30, 0, 3650),
    VERITY_RETENTION_MIN_TRAILS_DAYS: intVar(0, 0, 36_500),
    VERITY_RETENTION_MIN_EVIDENCE_FILES_DAYS: intVar(0, 0, 36_500),
    VERITY_RETENTION_MIN_SNAPSHOTS_DAYS: intVar(0, 0, 36_500),
    VERITY_RETENTION_MIN_AUDIT_LOG_DAYS: intVar(0, 0, 36_500),
    VERITY_RETENTION_INTERVAL_MS: intVar(3_600_000, 1000, 86_400_000),
    VERITY_RETENTION_BATCH_SIZE: intVar(50, 1, 10_000),
    VERITY_RETENTION_PAUSE_MS: intVar(200, 0, 60_000),
    VERITY_REEVALUATION_INTERVAL_MS: intVar(30_000, 100, 86_400_000),
    VERITY_DEPLOYMENTS_DEFER_FROM: intVar(10_000, 1, 1_000_000),
    VERITY_CHANGE_POLL_MS: intVar(100, 10, 60_000),
    VERITY_READ_CACHE_ENTRIES: intVar(20_000, 0, 1_000_000),
    VERITY_READ_CACHE_BYTES: intVar(64 * 1024 * 1024, 0, 16 * 1024 * 1024 * 1024),
    VERITY_OUTBOUND_ALLOW: optionalString.transform((v, ctx) => {
      const parsed = parseOutboundAllowList(v);
      if (!parsed.ok) {
        ctx.addIssue({ code: 'custom', message: parsed.reason });
        return z.NEVER;
      }
      return parsed.value;
    }),
    VERITY_OUTBOUND_TIMEOUT_MS: intVar(5000, 100, 120_000),
    VERITY_OUTBOUND_CA: optionalString.refine(
      (v) => v === undefined || v.includes('-----BEGIN CERTIFICATE-----'),
      {
        message: 'must hold PEM certificates (-----BEGIN CERTIFICATE-----)',
      },
    ),
    VERITY_SIGSTORE_TRUSTED_ROOT: signatureTrustVar('root'),
    VERITY_SIGSTORE_PUBLIC_KEYS: signatureTrustVar('keys'),
    VERITY_KEY_EXPIRY_SWEEP_MS: intVar(600_000, 1_000, 86_400_000),
    VERITY_WEBHOOK_SECRET: optionalString.refine((v) => v === undefined || v.length >= 16, {
      message: 'must be at least 16 characters',
    }),
    SMTP_URL: urlVar(['smtp:', 'smtps:']),
    VERITY_OIDC_ISSUER: urlVar(['http:', 'https:']),
    VERITY_OIDC_CLIENT_ID: optionalString,
    VERITY_OIDC_CLIENT_SECRET: optionalString,
    VERITY_OIDC_SCOPES: optionalString.transform((v) => v ?? 'openid profile email'),
    VERITY_OIDC_GROUPS_CLAIM: optionalString.transform((v) => v ?? 'groups'),
    VERITY_OIDC_PROVIDER_NAME: optionalString,
    VERITY_OIDC_GROUP_ROLES: zodVar(readGroupRoles),
    VERITY_OIDC_SESSION_IDLE_MINUTES: intVar(30, 1, 7 * 24 * 60),
    VERITY_OIDC_SESSION_MAX_HOURS: intVar(12, 1, 24 * 90),
    VERITY_OIDC_INSECURE_ISSUERS: optionalString.transform((v, ctx) => {
      const issuers = parseIssuerList(v);
      for (const issuer of issuers) {
        if (!URL.canParse(issuer) || !['http:', 'https:'].includes(new URL(issuer).protocol)) {
          ctx.addIssue({ code: 'custom', message: `'${issuer}' is not an http(s) URL` });
          return z.NEVER;
        }
      }
      return issuers;
    }),
    VERITY_API_KEY_SIGN_IN: boolVar(true),
    VERITY_EMAIL_FROM: optionalString.transform((v) => v ?? 'Verity <verity@localhost>'),
  })
  .superRefine((env, ctx) => {
    checkOidc(env, ctx);
    checkObjectStore(env, ctx);
    if (env.VERITY_BOOTSTRAP_API_KEY && !env.VERITY_BOOTSTRAP_ORG) {
      ctx.addIssue({
        code: 'custom',
        path: ['VERITY_BOOTSTRAP_API_KEY'],
        message: 'needs VERITY_BOOTSTRAP_ORG to name the organization the key administers',
      });
    }
  });

/** The organization a first start creates when none is configured (usecases/access/bootstrap.ts). */
const DEFAULT_BACKUP_ORG = 'default';

/** The parsed configuration of the API process. */
export interface Config {
  port: number;
  host: string;
  /** Port of the separate listener serving `GET /metrics` (never the API port: the series name tenants). */
  metricsPort: number;
  /** Address the metrics listener binds; defaults to `host`. */
  metricsHost: string;
  /** When set, a scrape must send `Authorization: Bearer <token>` (401 otherwise). */
  metricsToken: string | undefined;
  databaseUrl: string | undefined;
  dbPoolMax: number;
  /** PostgreSQL: run repeated statements as named prepared statements (off behind a transaction-mode pooler). */
  dbPreparedStatements: boolean;
  /** PostgreSQL: `statement_timeout` of request connections (0: none); a connection silent for 2 s more is dropped. */
  dbStatementTimeoutMs: number;
  /** PostgreSQL: bound on opening a connection or waiting for a free one. */
  dbConnectTimeoutMs: number;
  dataDir: string;
  logLevel: LogLevel;
  bootstrapOrg: string | undefined;
  bootstrapApiKey: string | undefined;
  publicUrl: string;
  /** The organization whose admins may download a backup of the embedded database (all organizations' data). */
  backupOrg: string;
  bodyLimitBytes: number;
  /** Largest file part of a multipart upload (templates, evidence, policies). */
  uploadLimitBytes: number;
  /** Largest evidence file of an attestation (413 beyond it); defaults to the upload limit. */
  evidenceMaxBytes: number;
  /** Where evidence files' bytes are kept: the database, or the S3-compatible object store. */
  evidenceStore: 'database' | 's3';
  /**
   * The object store, when a bucket is configured: the store of new files with `s3`, and where
   * the database store still reads files moved there (`evidence migrate`).
   */
  s3: S3Settings | undefined;
  /** SBOM components one attestation indexes at most, over all its documents. */
  sbomMaxComponents: number;
  /** Distinct versions of one package one attestation indexes at most. */
  sbomMaxVersions: number;
  /** Time bound of one custom-type evaluation (JSON Schema and jq rules). */
  jqTimeoutMs: number;
  /** Heap bound of the worker that runs custom-type evaluations. */
  jqMaxHeapMb: number;
  /** Worker threads that run custom-type evaluations. */
  jqWorkers: number;
  /** Evaluations one organization may have waiting (429 beyond). */
  jqQueuePerOrg: number;
  /** Run the server-side evaluation workers in this process. */
  evaluationsEnabled: boolean;
  /** Time bound of one server-side (CEL) evaluation. */
  celTimeoutMs: number;
  /** Heap bound of a worker that runs CEL evaluations. */
  celMaxHeapMb: number;
  /** Worker threads that run CEL evaluations. */
  celWorkers: number;
  /** How often the evaluation workers look for evaluations nobody announced (another replica's, a restart's). */
  evaluationsPollMs: number;
  /** The transparency log: triggers queue writes, the sequencer signs checkpoints (off: neither). */
  transparencyLog: boolean;
  /** PEM Ed25519 private keys signing checkpoints: the first signs, the rest stay listed (rotation); unset: a key per organization. */
  logSigningKey: string | undefined;
  /** Seals secrets Verity keeps in its database (generated log signing keys); unset: kept in the clear. */
  encryptionSecret: string | undefined;
  /** How often the sequencer integrates queued records into the log. */
  logSequenceMs: number;
  /** How often the self-check recomputes a sample of logged records. */
  logSelfCheckMs: number;
  /** Entries the self-check samples per round. */
  logSelfCheckSample: number;
  /** Requests per minute per API key (0: no limit). */
  rateLimitPerMinute: number;
  /** Requests per minute of all the keys of one organization together (0: no limit). */
  rateLimitPerOrgPerMinute: number;
  /** Service accounts one organization may have (409 beyond). */
  maxServiceAccountsPerOrg: number;
  /** Service-account keys one organization may have that still work (409 beyond). */
  maxActiveKeysPerOrg: number;
  /** Failed authentications per minute per client address before 429; 0 turns it off. */
  authFailuresPerMinute: number;
  shutdownTimeoutMs: number;
  /** Proxies whose X-Forwarded-* headers name the client: none, the last N hops, or these addresses. */
  trustProxy: TrustProxy;
  /** Run the notification and re-evaluation workers in this process. */
  notifierEnabled: boolean;
  notifierPollMs: number;
  notifierMaxAttempts: number;
  /** How long a claimed notification stays with its worker; a worker that dies releases it after this. */
  notifierLeaseMs: number;
  /** Days a delivered or given-up notification is kept; 0 keeps them forever. */
  notificationRetentionDays: number;
  /** The server operator's floor under each organization's retention periods (0: none). */
  retentionMinimumDays: {
    trails_days: number;
    evidence_files_days: number;
    snapshots_days: number;
    audit_log_days: number;
  };
  /** How often the retention job runs (with the background workers). */
  retentionIntervalMs: number;
  /** Records one retention batch removes at most, in one transaction. */
  retentionBatchSize: number;
  /** Pause between retention batches, so removal leaves room for ingest. */
  retentionPauseMs: number;
  reevaluationIntervalMs: number;
  deploymentsDeferFrom: number;
  /** Between reads of the evidence change log, which keeps this replica's caches current. */
  changePollMs: number;
  /** Evidence read views (GET artifact and the like) each replica keeps; 0 keeps none. */
  readCacheEntries: number;
  /** Bytes of those views each replica keeps at most (an artifact's answer grows with it). */
  readCacheBytes: number;
  /** Hosts and ranges notifications may reach despite being loopback or private. */
  outboundAllow: OutboundAllowList;
  outboundTimeoutMs: number;
  /** PEM certificates webhook and Slack deliveries trust besides the system's authorities. */
  outboundCa: string | undefined;
  /** Sigstore trusted root (JSON) signed evidence is verified against; undefined: none. */
  sigstoreTrustedRoot: string | undefined;
  /** Public keys of keyed signatures (JSON object of key id to PEM); undefined: none. */
  sigstorePublicKeys: string | undefined;
  /** How often the API-key expiry sweep runs. */
  keyExpirySweepMs: number;
  /** Key of the HMAC-SHA256 signature on webhook deliveries. */
  webhookSecret: string | undefined;
  smtpUrl: string | undefined;
  emailFrom: string;
  /** People's sign-in through an OpenID Provider; undefined when not configured. */
  oidc: OidcConfig | undefined;
  /** Issuers allowed over http (tests, air-gapped labs); exempt from the outbound address guard. */
  oidcInsecureIssuers: string[];
  /** The console's API-key form; API keys keep working for the API either way. */
  apiKeySignIn: boolean;
}

export { ConfigError };
export type { GroupRoles, OidcConfig } from './config-people.js';

/** Variables that may instead be read from the file named by `<NAME>_FILE`. */
const FILE_VARS = [
  'DATABASE_URL',
  'VERITY_BOOTSTRAP_API_KEY',
  'VERITY_WEBHOOK_SECRET',
  'SMTP_URL',
  'VERITY_METRICS_TOKEN',
  'VERITY_OIDC_CLIENT_SECRET',
  'VERITY_OUTBOUND_CA',
  'VERITY_SIGSTORE_TRUSTED_ROOT',
  'VERITY_SIGSTORE_PUBLIC_KEYS',
  'VERITY_LOG_SIGNING_KEY',
  'VERITY_ENCRYPTION_SECRET',
] as const;

/** The environment as parsed, before it becomes a Config. */
export type Env = z.infer<typeof EnvSchema>;

/** Every environment variable the API reads (and `<NAME>_FILE` for those above). */
export const CONFIG_VARIABLES: readonly string[] = [
  ...Object.keys(EnvSchema.shape),
  ...FILE_VARS.map((n) => `${n}_FILE`),
];

/** How people sign in: through the identity provider, and with API keys in the console. */
function peopleConfigOf(
  e: z.infer<typeof EnvSchema>,
): Pick<Config, 'oidc' | 'oidcInsecureIssuers' | 'apiKeySignIn'> {
  return {
    oidc: oidcConfigOf(e),
    oidcInsecureIssuers: e.VERITY_OIDC_INSECURE_ISSUERS,
    apiKeySignIn: e.VERITY_API_KEY_SIGN_IN,
  };
}

/** People's sign-in, when an issuer and a client are configured. */
function oidcConfigOf(e: z.infer<typeof EnvSchema>): OidcConfig | undefined {
  if (!e.VERITY_OIDC_ISSUER || !e.VERITY_OIDC_CLIENT_ID) {
    return undefined;
  }
  return {
    issuer: e.VERITY_OIDC_ISSUER,
    clientId: e.VERITY_OIDC_CLIENT_ID,
    clientSecret: e.VERITY_OIDC_CLIENT_SECRET,
    scopes: e.VERITY_OIDC_SCOPES,
    groupsClaim: e.VERITY_OIDC_GROUPS_CLAIM,
    providerName: e.VERITY_OIDC_PROVIDER_NAME ?? new URL(e.VERITY_OIDC_ISSUER).host,
    groupRoles: e.VERITY_OIDC_GROUP_ROLES,
    sessionIdleMs: e.VERITY_OIDC_SESSION_IDLE_MINUTES * 60_000,
    sessionMaxMs: e.VERITY_OIDC_SESSION_MAX_HOURS * 3_600_000,
  };
}

/** The environment with each `<NAME>_FILE` read into `<NAME>`, and the files that could not be read. */
function withFileVariables(
  env: Record<string, string | undefined>,
  readFile: ReadFile,
): { merged: Record<string, string | undefined>; problems: string[] } {
  const problems: string[] = [];
  const merged: Record<string, string | undefined> = { ...env };
  for (const name of FILE_VARS) {
    const read = readSecret(name, env[name], env[`${name}_FILE`], readFile);
    if ('problem' in read) {
      problems.push(read.problem);
    } else if ('content' in read && read.source.kind === 'file') {
      merged[name] = read.content;
    }
  }
  return { merged, problems };
}

/** Parse the environment; throws {@link ConfigError} listing every bad variable. */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  readFile: ReadFile = readTextFile,
): Config {
  const { merged, problems } = withFileVariables(env, readFile);
  const parsed = EnvSchema.safeParse(merged);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const name = issue.path.join('.') || '(environment)';
      problems.push(`${name}: ${issue.message}`);
    }
  }
  if (problems.length > 0 || !parsed.success) {
    throw new ConfigError(problems);
  }
  const e = parsed.data;
  // Unset (the 0 default) means the upload limit.
  const evidenceMax =
    e.VERITY_EVIDENCE_MAX_BYTES === 0 ? e.VERITY_UPLOAD_LIMIT_BYTES : e.VERITY_EVIDENCE_MAX_BYTES;
  return {
    port: e.PORT,
    host: e.HOST,
    metricsPort: e.VERITY_METRICS_PORT,
    metricsHost: e.VERITY_METRICS_HOST ?? e.HOST,
    metricsToken: e.VERITY_METRICS_TOKEN,
    databaseUrl: e.DATABASE_URL,
    dbPoolMax: e.VERITY_DB_POOL_MAX,
    dbPreparedStatements: e.VERITY_DB_PREPARED_STATEMENTS,
    dbStatementTimeoutMs: e.VERITY_DB_STATEMENT_TIMEOUT_MS,
    dbConnectTimeoutMs: e.VERITY_DB_CONNECT_TIMEOUT_MS,
    dataDir: e.VERITY_DATA_DIR,
    logLevel: e.LOG_LEVEL,
    bootstrapOrg: e.VERITY_BOOTSTRAP_ORG,
    bootstrapApiKey: e.VERITY_BOOTSTRAP_API_KEY,
    publicUrl: (e.VERITY_PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    backupOrg: e.VERITY_BACKUP_ORG ?? e.VERITY_BOOTSTRAP_ORG ?? DEFAULT_BACKUP_ORG,
    bodyLimitBytes: e.VERITY_BODY_LIMIT_BYTES,
    uploadLimitBytes: e.VERITY_UPLOAD_LIMIT_BYTES,
    evidenceMaxBytes: evidenceMax,
    evidenceStore: e.VERITY_EVIDENCE_STORE,
    s3: s3SettingsOf(e),
    sbomMaxComponents: e.VERITY_SBOM_MAX_COMPONENTS,
    sbomMaxVersions: e.VERITY_SBOM_MAX_VERSIONS,
    jqTimeoutMs: e.VERITY_JQ_TIMEOUT_MS,
    jqMaxHeapMb: e.VERITY_JQ_MAX_HEAP_MB,
    jqWorkers: e.VERITY_JQ_WORKERS,
    jqQueuePerOrg: e.VERITY_JQ_QUEUE_PER_ORG,
    ...evaluationSettings(e),
    ...logSettings(e),
    rateLimitPerMinute: e.VERITY_RATE_LIMIT_PER_MINUTE,
    rateLimitPerOrgPerMinute:
      e.VERITY_RATE_LIMIT_PER_ORG_PER_MINUTE === -1
        ? e.VERITY_RATE_LIMIT_PER_MINUTE * 10
        : e.VERITY_RATE_LIMIT_PER_ORG_PER_MINUTE,
    maxServiceAccountsPerOrg: e.VERITY_MAX_SERVICE_ACCOUNTS_PER_ORG,
    maxActiveKeysPerOrg: e.VERITY_MAX_ACTIVE_KEYS_PER_ORG,
    authFailuresPerMinute: e.VERITY_AUTH_FAILURES_PER_MINUTE,
    shutdownTimeoutMs: e.VERITY_SHUTDOWN_TIMEOUT_MS,
    trustProxy: e.VERITY_TRUST_PROXY,
    notifierEnabled: e.VERITY_NOTIFIER_ENABLED,
    notifierPollMs: e.VERITY_NOTIFIER_POLL_MS,
    notifierMaxAttempts: e.VERITY_NOTIFIER_MAX_ATTEMPTS,
    notifierLeaseMs: e.VERITY_NOTIFIER_LEASE_MS,
    notificationRetentionDays: e.VERITY_NOTIFICATION_RETENTION_DAYS,
    ...retentionConfigOf(e),
    ...runtimeSettings(e),
    readCacheEntries: e.VERITY_READ_CACHE_ENTRIES,
    readCacheBytes: e.VERITY_READ_CACHE_BYTES,
    outboundAllow: e.VERITY_OUTBOUND_ALLOW,
    outboundTimeoutMs: e.VERITY_OUTBOUND_TIMEOUT_MS,
    outboundCa: e.VERITY_OUTBOUND_CA,
    sigstoreTrustedRoot: e.VERITY_SIGSTORE_TRUSTED_ROOT,
    sigstorePublicKeys: e.VERITY_SIGSTORE_PUBLIC_KEYS,
    keyExpirySweepMs: e.VERITY_KEY_EXPIRY_SWEEP_MS,
    webhookSecret: e.VERITY_WEBHOOK_SECRET,
    smtpUrl: e.SMTP_URL,
    emailFrom: e.VERITY_EMAIL_FROM,
    ...peopleConfigOf(e),
  };
}
