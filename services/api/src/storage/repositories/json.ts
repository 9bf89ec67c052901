/**
 * jsonb parameters: values are serialised here, because `pg` would send a JS array as a
 * PostgreSQL array.
 */

/** The JSON text of a value for a jsonb column; null and undefined stay null. */
export function toJson(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/** The JSON text of a value for a non-null jsonb column. */
export function toJsonNotNull(value: unknown): string {
  return JSON.stringify(value ?? null);
}
