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

/** A query the server did not answer in time: its connection is taken for dead. */
export class DatabaseTimeoutError extends Error {
  readonly code = 'VERITY_DB_TIMEOUT';
  constructor(ms: number) {
    super(`The database did not answer within ${ms} ms`);
    this.name = 'DatabaseTimeoutError';
  }
}

/**
 * SQLSTATEs that mean the database is not there to answer, for now: connection exceptions
 * (class 08), the server shutting down or starting (57P01-57P03), a cancelled statement (57014,
 * the statement timeout), too many connections (53300), and a standby not yet promoted refusing
 * writes (25006).
 */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '57014', '53300', '25006']);
const UNAVAILABLE_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'VERITY_DB_TIMEOUT',
]);
/** What the `pg` driver says (without a code) when a connection is lost, refused or not ready. */
const UNAVAILABLE_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Query read timeout|Cannot use a pool after calling end)/;

/**
 * True when an error means the database is unreachable or not answering (an outage, a
 * failover, a timeout), as opposed to a fault of the request or of the code: the caller may
 * retry later.
 */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 3) {
    return false;
  }
  const { code, message, cause } = err as { code?: unknown; message?: unknown; cause?: unknown };
  if (typeof code === 'string') {
    if (code.startsWith('08') && code.length === 5) {
      return true;
    }
    if (UNAVAILABLE_STATES.has(code) || UNAVAILABLE_SOCKET_CODES.has(code)) {
      return true;
    }
  }
  if (typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message)) {
    return true;
  }
  if (err instanceof AggregateError && err.errors.some((e) => isDatabaseUnavailable(e, depth + 1))) {
    return true;
  }
  return cause !== undefined && isDatabaseUnavailable(cause, depth + 1);
}

/**
 * Unavailable because the server or the connection is gone, not because one statement ran out
 * of time (`57014`, the statement timeout): what one statement met, the next one meets too.
 */
export function isDatabaseAway(err: unknown): boolean {
  return isDatabaseUnavailable(err) && (err as { code?: unknown }).code !== '57014';
}
