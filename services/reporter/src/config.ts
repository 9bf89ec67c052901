/**
 * Reporter configuration: the API to report to, from environment variables, and the environments
 * to report, either from the multi-environment YAML file of `kosli snapshot k8s --config-file`
 * (VERITY_REPORTER_CONFIG) or as one environment from variables. Every problem is collected and
 * reported at once.
 */
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';
import {
  ConfigError,
  LOG_LEVEL_PROBLEM,
  LOG_LEVELS,
  readApiToken,
  readBoolean,
  readInteger,
  readTextFile,
  type LogLevel,
  type ReadFile,
  type SecretSource,
} from '../../shared/config.js';
import type { AgentConfig } from '../../shared/agent/index.js';
import { NAME_PATTERN, ORG_NAME_PATTERN } from '../../shared/contract/common.js';
import { parseLabelSelector } from './label-selector.js';
import { regexProblem, type NamespaceSelection } from './namespace-filter.js';

/** One environment and the pods that make it up. */
export interface EnvironmentConfig extends NamespaceSelection {
  name: string;
  /** A Kubernetes label selector applied by the API server to the watch; undefined for all pods. */
  labelSelector: string | undefined;
}

/** Where the API key comes from; a file is read again on every request so a rotated Secret works. */
export type TokenSource = SecretSource;

/** The parsed configuration of the reporter process. */
export interface ReporterConfig extends AgentConfig {
  environments: EnvironmentConfig[];
  /** Quiet time after the last pod event before a report is built. */
  debounceMs: number;
  /** Longest a pending change waits while events keep coming. */
  maxWaitMs: number;
  /** A full report goes out this long after the last one, changed or not. */
  heartbeatMs: number;
  /** GET the environment before the first report and create it (type K8S) when missing. */
  autoCreateEnvironments: boolean;
  environmentDescription: string;
}

export { ConfigError };

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Problems of one environment entry. `at(field)` names a field in messages: the file's field name
 * (`namespacesRegex`) or the variable that set it (`VERITY_NAMESPACES_REGEX`).
 */
function environmentProblems(
  env: EnvironmentConfig,
  at: (field: keyof EnvironmentConfig) => string,
): string[] {
  const problems: string[] = [];
  if (!NAME_PATTERN.test(env.name) || env.name.length > 255) {
    problems.push(`${at('name')}: '${env.name}' must match ${NAME_PATTERN.source}`);
  }
  const include = env.namespaces.length > 0 || env.namespacesRegex.length > 0;
  const exclude = env.excludeNamespaces.length > 0 || env.excludeNamespacesRegex.length > 0;
  if (include && exclude) {
    const inc = env.namespaces.length > 0 ? 'namespaces' : 'namespacesRegex';
    const exc = env.excludeNamespaces.length > 0 ? 'excludeNamespaces' : 'excludeNamespacesRegex';
    problems.push(`${at(exc)}: cannot be combined with ${at(inc)}; use inclusions or exclusions, not both`);
  }
  for (const field of ['namespaces', 'excludeNamespaces'] as const) {
    for (const ns of env[field]) {
      if (ns.length > 63 || !DNS_LABEL.test(ns)) {
        problems.push(`${at(field)}: '${ns}' is not a valid namespace name`);
      }
    }
  }
  for (const field of ['namespacesRegex', 'excludeNamespacesRegex'] as const) {
    for (const pattern of env[field]) {
      const problem = regexProblem(pattern);
      if (problem) {
        problems.push(`${at(field)}: invalid regex '${pattern}': ${problem}`);
      }
    }
  }
  if (env.labelSelector !== undefined) {
    const parsed = parseLabelSelector(env.labelSelector);
    if (!parsed.ok) {
      problems.push(`${at('labelSelector')}: invalid label selector '${env.labelSelector}': ${parsed.error}`);
    }
  }
  return problems;
}

const stringList = z.array(z.string().trim().min(1, 'must not be empty')).default([]);
const FileEnvironment = z.strictObject({
  name: z.string().trim().min(1, "missing required field 'name'"),
  namespaces: stringList,
  namespacesRegex: stringList,
  excludeNamespaces: stringList,
  excludeNamespacesRegex: stringList,
  labelSelector: z.string().trim().min(1).optional(),
});

/** Parses the multi-environment YAML text; returns the environments or every problem in it. */
export function parseEnvironmentsFile(
  text: string,
  source = 'config file',
): { environments: EnvironmentConfig[]; problems: string[] } {
  let doc: unknown;
  try {
    doc = parseYaml(text, { prettyErrors: true });
  } catch (err) {
    const message = err instanceof YAMLParseError ? err.message.split('\n')[0] : (err as Error).message;
    return { environments: [], problems: [`${source}: invalid YAML: ${message}`] };
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    return { environments: [], problems: [`${source}: must be a mapping with an 'environments' list`] };
  }
  const problems: string[] = [];
  const extra = Object.keys(doc).filter((k) => k !== 'environments');
  if (extra.length > 0) {
    problems.push(`${source}: unknown top-level field(s) ${extra.map((k) => `'${k}'`).join(', ')}`);
  }
  const list = (doc as { environments?: unknown }).environments;
  if (!Array.isArray(list) || list.length === 0) {
    problems.push(`${source}: 'environments' must list at least one environment`);
    return { environments: [], problems };
  }
  const environments: EnvironmentConfig[] = [];
  const seen = new Set<string>();
  list.forEach((entry: unknown, i) => {
    const where = `${source}: environments[${i}]`;
    const parsed = FileEnvironment.safeParse(entry);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const field = issue.path.join('.');
        const message =
          issue.code === 'unrecognized_keys'
            ? `unknown field(s) ${issue.keys.map((k) => `'${k}'`).join(', ')}`
            : field === 'name' && issue.code === 'invalid_type'
              ? "missing required field 'name'"
              : issue.message;
        problems.push(
          `${where}${field && issue.code !== 'unrecognized_keys' ? `.${field}` : ''}: ${message}`,
        );
      }
      return;
    }
    const env: EnvironmentConfig = { ...parsed.data, labelSelector: parsed.data.labelSelector };
    if (seen.has(env.name)) {
      problems.push(`${where}: duplicate environment name '${env.name}'`);
    }
    seen.add(env.name);
    problems.push(...environmentProblems(env, (field) => field).map((p) => `${where} ('${env.name}'): ${p}`));
    environments.push(env);
  });
  return { environments, problems };
}

const csv = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

type Env = Record<string, string | undefined>;

/** Reads an integer variable within bounds, or records why it cannot. */
function intVar(env: Env, name: string, def: number, min: number, max: number, problems: string[]): number {
  const read = readInteger(env[name]?.trim(), def, min, max);
  if (read.ok) {
    return read.value;
  }
  problems.push(`${name}: ${read.problem}`);
  return def;
}

function boolVar(env: Env, name: string, problems: string[]): boolean {
  const read = readBoolean(env[name], false);
  if (read.ok) {
    return read.value;
  }
  problems.push(`${name}: ${read.problem}`);
  return false;
}

/** A variable's trimmed value; blank is unset. */
const getter = (env: Env) => (name: string) => {
  const v = env[name]?.trim();
  return v === '' ? undefined : v;
};

/** The Verity server and organization to report to. */
function readTarget(env: Env, problems: string[]): { apiUrl: string; org: string } {
  const get = getter(env);
  const apiUrl = get('VERITY_API_URL');
  if (!apiUrl) {
    problems.push('VERITY_API_URL: required (the Verity server, e.g. http://verity:8080)');
  } else {
    let ok = false;
    try {
      ok = ['http:', 'https:'].includes(new URL(apiUrl).protocol);
    } catch {
      ok = false;
    }
    if (!ok) {
      problems.push(`VERITY_API_URL: must be an http or https URL, got '${apiUrl}'`);
    }
  }
  const org = get('VERITY_ORG');
  if (!org) {
    problems.push('VERITY_ORG: required (the organization to report to)');
  } else if (!ORG_NAME_PATTERN.test(org)) {
    problems.push(`VERITY_ORG: must match ${ORG_NAME_PATTERN.source}`);
  }
  return { apiUrl: (apiUrl ?? '').replace(/\/+$/, ''), org: org ?? '' };
}

/** The variables that describe one environment, which VERITY_REPORTER_CONFIG replaces. */
const SINGLE_ENVIRONMENT_VARS = [
  'VERITY_ENVIRONMENT',
  'VERITY_NAMESPACES',
  'VERITY_NAMESPACES_REGEX',
  'VERITY_EXCLUDE_NAMESPACES',
  'VERITY_EXCLUDE_NAMESPACES_REGEX',
  'VERITY_LABEL_SELECTOR',
];

/** The environments of the file VERITY_REPORTER_CONFIG names. */
function readEnvironmentsFile(
  env: Env,
  configFile: string,
  readFile: ReadFile,
  problems: string[],
): EnvironmentConfig[] {
  const get = getter(env);
  for (const name of SINGLE_ENVIRONMENT_VARS.filter((n) => get(n) !== undefined)) {
    problems.push(
      `${name}: cannot be used with VERITY_REPORTER_CONFIG; describe every environment in the file`,
    );
  }
  let text: string | undefined;
  try {
    text = readFile(configFile);
  } catch (err) {
    problems.push(`VERITY_REPORTER_CONFIG: cannot read '${configFile}': ${(err as Error).message}`);
  }
  if (text === undefined) {
    return [];
  }
  const parsed = parseEnvironmentsFile(text, `VERITY_REPORTER_CONFIG '${configFile}'`);
  problems.push(...parsed.problems);
  return parsed.environments;
}

/** The one environment VERITY_ENVIRONMENT and its companion variables describe. */
function readSingleEnvironment(env: Env, problems: string[]): EnvironmentConfig[] {
  const get = getter(env);
  const name = get('VERITY_ENVIRONMENT');
  if (!name) {
    problems.push('VERITY_ENVIRONMENT: required (the environment to report), or VERITY_REPORTER_CONFIG');
    return [];
  }
  const single: EnvironmentConfig = {
    name,
    namespaces: csv(env.VERITY_NAMESPACES),
    namespacesRegex: csv(env.VERITY_NAMESPACES_REGEX),
    excludeNamespaces: csv(env.VERITY_EXCLUDE_NAMESPACES),
    excludeNamespacesRegex: csv(env.VERITY_EXCLUDE_NAMESPACES_REGEX),
    labelSelector: get('VERITY_LABEL_SELECTOR'),
  };
  // Messages name the variables the user set, not the file's fields.
  const at = (field: keyof EnvironmentConfig) =>
    field === 'name' ? 'VERITY_ENVIRONMENT' : `VERITY_${field.replace(/([A-Z])/g, '_$1').toUpperCase()}`;
  problems.push(...environmentProblems(single, at));
  return [single];
}

/** Parse the reporter's environment (and its config file); throws {@link ConfigError} with every problem. */
export function loadReporterConfig(
  env: Env = process.env,
  readFile: ReadFile = readTextFile,
): ReporterConfig {
  const problems: string[] = [];
  const get = getter(env);
  const { apiUrl, org } = readTarget(env, problems);
  const token = readApiToken(get('VERITY_API_TOKEN'), get('VERITY_API_TOKEN_FILE'), readFile, problems);
  const configFile = get('VERITY_REPORTER_CONFIG');
  const environments = configFile
    ? readEnvironmentsFile(env, configFile, readFile, problems)
    : readSingleEnvironment(env, problems);

  const debounceMs = intVar(env, 'VERITY_DEBOUNCE_MS', 2000, 0, 600_000, problems);
  const maxWaitMs = intVar(env, 'VERITY_MAX_WAIT_MS', 10_000, 0, 3_600_000, problems);
  if (maxWaitMs < debounceMs) {
    problems.push(
      `VERITY_MAX_WAIT_MS: must be at least VERITY_DEBOUNCE_MS (${debounceMs}), got ${maxWaitMs}`,
    );
  }
  const logLevel = (get('LOG_LEVEL') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`LOG_LEVEL: ${LOG_LEVEL_PROBLEM}`);
  }

  const config: ReporterConfig = {
    apiUrl,
    org,
    token,
    environments,
    debounceMs,
    maxWaitMs,
    heartbeatMs: intVar(env, 'VERITY_HEARTBEAT_SECONDS', 600, 1, 86_400, problems) * 1000,
    autoCreateEnvironments: boolVar(env, 'VERITY_AUTO_CREATE_ENVIRONMENTS', problems),
    environmentDescription: get('VERITY_ENVIRONMENT_DESCRIPTION') ?? 'Auto-created by the Verity reporter',
    retryBaseMs: 1000,
    retryMaxMs: intVar(env, 'VERITY_RETRY_MAX_DELAY_MS', 60_000, 1000, 3_600_000, problems),
    port: intVar(env, 'VERITY_REPORTER_PORT', 8081, 0, 65535, problems),
    host: get('VERITY_REPORTER_HOST') ?? '0.0.0.0',
    logLevel,
    shutdownTimeoutMs: intVar(env, 'VERITY_SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000, problems),
  };
  if (problems.length > 0) {
    throw new ConfigError(problems, 'reporter');
  }
  return config;
}
