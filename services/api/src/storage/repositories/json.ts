/**
 * Parameter helpers: jsonb values are serialised here, because `pg` would send a JS array as a
 * PostgreSQL array; LIKE patterns escape the user's wildcards.
 */

/** The JSON text of a value for a jsonb column; null and undefined stay null. */
export function toJson(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/** The JSON text of a value for a non-null jsonb column. */
export function toJsonNotNull(value: unknown): string {
  return JSON.stringify(value ?? null);
}

/** A LIKE pattern matching `text` anywhere, with the user's `%`, `_` and `\\` taken literally. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
