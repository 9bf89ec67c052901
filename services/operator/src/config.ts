/**
 * Operator configuration from environment variables, parsed once with zod; every bad variable is
 * reported at once.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ORG_NAME_PATTERN } from '../../shared/contract/common.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Where the API key comes from; a file is read again on every request, so a rotated Secret works. */
export type TokenSource = { kind: 'value'; value: string } | { kind: 'file'; path: string };

/** The parsed configuration of the operator process. */
export interface OperatorConfig {
  apiUrl: string;
  org: string;
  token: TokenSource;
  /** Namespaces whose resources are reconciled; empty: every namespace. */
  watchNamespaces: string[];
  /** Secrets Actions may reference without the opt-in label (VERITY_SECRET_NAMES). */
  secretNames?: string[];
  /** A resource that matches Verity is looked at again this long after, to repair drift. */
  requeueIntervalMs: number;
  /** Reconciles running at once (never two for one resource). */
  workers: number;
  /** First and longest retry delay after a retryable failure. */
  retryBaseMs: number;
  retryMaxMs: number;
  port: number;
  host: string;
  logLevel: (typeof LOG_LEVELS)[number];
  shutdownTimeoutMs: number;
}

/** Raised with every problem found in the configuration. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid operator configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** An unset or blank variable is absent. */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), schema.optional());

const intVar = (def: number, min: number, max: number) =>
  z.preprocess(
    (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
    z
      .string()
      .trim()
      .regex(/^-?\d+$/, `must be an integer between ${min} and ${max}`)
      .transform(Number)
      .pipe(
        z
          .number()
          .min(min, `must be an integer between ${min} and ${max}`)
          .max(max, `must be an integer between ${min} and ${max}`),
      )
      .default(def),
  );

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

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
      .refine((list) => list.every((ns) => ns.length <= 63 && DNS_LABEL.test(ns)), {
        message: 'must be a comma list of namespace names',
      }),
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
  LOG_LEVEL: optional(z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` })),
});

/** Parses the operator's environment; throws {@link ConfigError} with every problem. */
export function loadOperatorConfig(
  env: Record<string, string | undefined> = process.env,
  readFile: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): OperatorConfig {
  const parsed = Env.safeParse(env);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((i) => `${String(i.path[0] ?? 'environment')}: ${i.message}`);

  // The key is checked whatever else is wrong, so every problem shows at once.
  let token: TokenSource = { kind: 'value', value: '' };
  const value = env.VERITY_API_TOKEN?.trim();
  const file = env.VERITY_API_TOKEN_FILE?.trim();
  if (value && file)
    problems.push('VERITY_API_TOKEN: set both VERITY_API_TOKEN and VERITY_API_TOKEN_FILE; use one');
  else if (value) token = { kind: 'value', value };
  else if (file) {
    token = { kind: 'file', path: file };
    try {
      if (readFile(file).trim() === '') problems.push(`VERITY_API_TOKEN_FILE: '${file}' is empty`);
    } catch (err) {
      problems.push(`VERITY_API_TOKEN_FILE: cannot read '${file}': ${(err as Error).message}`);
    }
  } else problems.push('VERITY_API_TOKEN: required, or VERITY_API_TOKEN_FILE naming a file that holds it');
  if (!parsed.success || problems.length > 0) throw new ConfigError(problems);
  const d = parsed.data;
  return {
    apiUrl: d.VERITY_API_URL.replace(/\/+$/, ''),
    org: d.VERITY_ORG,
    token,
    watchNamespaces: d.VERITY_WATCH_NAMESPACES ?? [],
    secretNames: d.VERITY_SECRET_NAMES ?? [],
    requeueIntervalMs: d.VERITY_REQUEUE_INTERVAL_SECONDS * 1000,
    workers: d.VERITY_OPERATOR_WORKERS,
    retryBaseMs: 1000,
    retryMaxMs: d.VERITY_RETRY_MAX_DELAY_MS,
    port: d.VERITY_OPERATOR_PORT,
    host: d.VERITY_OPERATOR_HOST ?? '0.0.0.0',
    logLevel: d.LOG_LEVEL ?? 'info',
    shutdownTimeoutMs: d.VERITY_SHUTDOWN_TIMEOUT_MS,
  };
}

/** The API key as the client reads it: the value, or the file's content read on each request. */
export function tokenReader(
  source: TokenSource,
  readFile: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): () => string {
  return source.kind === 'value' ? () => source.value : () => readFile(source.path).trim();
}
