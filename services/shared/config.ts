/**
 * The configuration kit of the three programs (API, reporter, operator): every program parses its
 * environment once, collects every problem, and throws one {@link ConfigError} listing them all.
 * The readers here return a value or the message of a problem, so a zod schema and a hand-written
 * loader report the same words.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** pino's levels, and `silent`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The problem of a LOG_LEVEL outside {@link LOG_LEVELS}. */
export const LOG_LEVEL_PROBLEM = `must be one of ${LOG_LEVELS.join(', ')}`;

/** Reads a file as text; the default of every loader, replaced in tests. */
export type ReadFile = (path: string) => string;
export const readTextFile: ReadFile = (p) => readFileSync(p, 'utf8');

/** Raised with every problem found in the environment, one `NAME: problem` line each. */
export class ConfigError extends Error {
  /** `program` names whose configuration it is ("reporter": "Invalid reporter configuration"). */
  constructor(
    readonly problems: string[],
    program?: string,
  ) {
    const what = program ? `${program} configuration` : 'configuration';
    super(`Invalid ${what}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** A value read from a variable, or why it cannot be. */
export type Reading<T> = { ok: true; value: T } | { ok: false; problem: string };

export interface IntegerOptions {
  /** Accept only an optional minus and decimal digits (not `1e3` or `0x10`, which Number reads). */
  digitsOnly?: boolean;
  /** Quote the rejected value in the problem (the default). */
  echo?: boolean;
}

/** An integer between `min` and `max`; unset or blank is `def`. */
export function readInteger(
  raw: string | undefined,
  def: number,
  min: number,
  max: number,
  options: IntegerOptions = {},
): Reading<number> {
  if (raw === undefined || raw.trim() === '') {
    return { ok: true, value: def };
  }
  const n = Number(raw);
  const written = !options.digitsOnly || /^-?\d+$/.test(raw.trim());
  if (written && Number.isInteger(n) && n >= min && n <= max) {
    return { ok: true, value: n };
  }
  const got = options.echo === false ? '' : `, got '${raw}'`;
  return { ok: false, problem: `must be an integer between ${min} and ${max}${got}` };
}

/** `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`, any case; unset or blank is `def`. */
export function readBoolean(raw: string | undefined, def: boolean): Reading<boolean> {
  if (raw === undefined || raw.trim() === '') {
    return { ok: true, value: def };
  }
  const s = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(s)) {
    return { ok: true, value: true };
  }
  if (['0', 'false', 'no', 'off'].includes(s)) {
    return { ok: true, value: false };
  }
  return { ok: false, problem: `must be true or false, got '${raw}'` };
}

/** A reader as a zod field of an environment schema: its problem becomes the field's issue. */
export const zodVar = <T>(read: (raw: string | undefined) => Reading<T>) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      const r = read(v);
      if (!r.ok) {
        ctx.addIssue({ code: 'custom', message: r.problem });
        return z.NEVER;
      }
      return r.value;
    });

/** {@link readInteger} as a zod field. */
export const intVar = (def: number, min: number, max: number, options?: IntegerOptions) =>
  zodVar((v) => readInteger(v, def, min, max, options));

/** {@link readBoolean} as a zod field. */
export const boolVar = (def: boolean) => zodVar((v) => readBoolean(v, def));

/** Where a secret comes from: the variable `NAME` itself, or the file that `NAME_FILE` names. */
export type SecretSource = { kind: 'value'; value: string } | { kind: 'file'; path: string };

/** A secret set as `NAME` or `NAME_FILE`; a file's content is read (trimmed) to check it. */
export type SecretReading =
  { source: undefined } | { source: SecretSource; content: string } | { source: undefined; problem: string };

/**
 * Reads the secret `name` from its `value` or the file at `file` (the variables as the caller
 * normalised them): setting both is a problem, and so is a file that cannot be read.
 */
export function readSecret(
  name: string,
  value: string | undefined,
  file: string | undefined,
  readFile: ReadFile,
): SecretReading {
  if (value && file) {
    return { source: undefined, problem: `${name}: set both ${name} and ${name}_FILE; use one` };
  }
  if (value) {
    return { source: { kind: 'value', value }, content: value };
  }
  if (!file) {
    return { source: undefined };
  }
  try {
    return { source: { kind: 'file', path: file }, content: readFile(file).trim() };
  } catch (err) {
    return { source: undefined, problem: `${name}_FILE: cannot read '${file}': ${(err as Error).message}` };
  }
}

/**
 * The API key of an in-cluster program (VERITY_API_TOKEN or VERITY_API_TOKEN_FILE), required and
 * not empty; a problem goes to `problems`. A file is kept as a path, read again on every request.
 */
export function readApiToken(
  value: string | undefined,
  file: string | undefined,
  readFile: ReadFile,
  problems: string[],
): SecretSource {
  const read = readSecret('VERITY_API_TOKEN', value, file, readFile);
  if ('problem' in read) {
    problems.push(read.problem);
  } else if (!read.source) {
    problems.push('VERITY_API_TOKEN: required, or VERITY_API_TOKEN_FILE naming a file that holds it');
  } else if (read.source.kind === 'file' && read.content === '') {
    problems.push(`VERITY_API_TOKEN_FILE: '${read.source.path}' is empty`);
  }
  return read.source ?? { kind: 'value', value: '' };
}

/** The secret as a client reads it: the value, or the file's content read on each call. */
export function secretReader(source: SecretSource, readFile: ReadFile = readTextFile): () => string {
  return source.kind === 'value' ? () => source.value : () => readFile(source.path).trim();
}
