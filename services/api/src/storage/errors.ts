/** Recognising database errors the same way on PostgreSQL and PGlite. */

/** True for a unique-constraint violation (SQLSTATE 23505). */
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';
}

/** True for a serialization failure or deadlock, which a retry resolves. */
export function isTransientConflict(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return code === '40001' || code === '40P01';
}
