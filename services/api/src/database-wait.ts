/**
 * Starting before PostgreSQL: the process keeps trying to open (and migrate) the database with
 * backoff instead of exiting, so a cluster restart does not become a crash loop of the API.
 * Meanwhile a small server on the API's port answers the probes: `/healthz` 200 (the process is
 * alive, restarting it would not help) and `/readyz` 503 with the reason; every other path 503.
 */
import { createServer, type Server } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { isDatabaseUnavailable } from './storage/errors.js';

/** First wait between two attempts; it doubles up to {@link RETRY_MAX_MS}. */
export const RETRY_FIRST_MS = 250;
export const RETRY_MAX_MS = 5_000;

/**
 * SQLSTATEs with which a reachable server refuses the connection: authentication (class 28) and
 * an unknown database (3D000). They are usually a configuration mistake, but may also be fixed
 * on the server side (a role or a database created after the API started), so they are retried
 * too, and logged as errors each time.
 */
function isRefusal(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && (code.startsWith('28') || code === '3D000');
}

const SOCKET_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name not resolved yet',
  VERITY_DB_TIMEOUT: 'no answer in time',
};

/**
 * Why an attempt failed, for the public `/readyz`: the server's own message with its SQLSTATE,
 * or a phrase for a socket error (never an address: the probe needs no credentials).
 */
export function describeFailure(err: unknown): string {
  const errors = err instanceof AggregateError && err.errors.length > 0 ? err.errors : [err];
  for (const e of errors) {
    const { code, message } = (typeof e === 'object' && e !== null ? e : {}) as {
      code?: unknown;
      message?: unknown;
    };
    if (typeof code === 'string' && SOCKET_REASONS[code]) {
      return SOCKET_REASONS[code];
    }
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && typeof message === 'string') {
      return `${message} (SQLSTATE ${code})`;
    }
    if (typeof message === 'string' && message !== '') {
      return message.replace(/\d{1,3}(\.\d{1,3}){3}(:\d+)?|\[[0-9a-f:]+\](:\d+)?/gi, 'the server');
    }
  }
  return 'unknown error';
}

function logText(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) {
    return err.errors.map(logText).join('; ');
  }
  const { code, message } = (typeof err === 'object' && err !== null ? err : {}) as {
    code?: unknown;
    message?: unknown;
  };
  const text = typeof message === 'string' && message !== '' ? message : String(err);
  return typeof code === 'string' && !text.includes(code) ? `${text} (${code})` : text;
}

export interface WaitLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * Runs `open` until it succeeds. A failure that means the database is not there yet (or refuses
 * the connection) is logged with its reason and retried after a growing wait; any other error
 * (a failing migration, a fault of the code) is thrown. `signal` ends the wait early.
 */
export async function untilDatabase<T>(
  open: () => Promise<T>,
  options: { log: WaitLog; onFailure: (message: string) => void; signal: AbortSignal },
): Promise<T> {
  let wait = RETRY_FIRST_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await open();
    } catch (err) {
      const refused = isRefusal(err);
      if (!refused && !isDatabaseUnavailable(err)) {
        throw err;
      }
      const reason = describeFailure(err);
      // The driver's own message (with the address) for the operator; no stack on every retry.
      const fields = { error: logText(err), attempt, retryInMs: wait };
      if (refused) {
        options.onFailure(`the database refuses the connection: ${reason}; retrying`);
        options.log.error(
          fields,
          `the database refuses the connection: ${reason}; check DATABASE_URL; retrying`,
        );
      } else {
        options.onFailure(`database not reachable yet: ${reason}; retrying`);
        options.log.warn(fields, `database not reachable yet: ${reason}; retrying`);
      }
    }
    await delay(wait, undefined, { signal: options.signal });
    wait = Math.min(wait * 2, RETRY_MAX_MS);
  }
}

/** The server that answers on the API's port while the database is awaited. */
export interface WaitingServer {
  /** Sets what `/readyz` says. */
  setReason(message: string): void;
  close(): Promise<void>;
}

export async function startWaitingServer(host: string, port: number): Promise<WaitingServer> {
  let reason = 'waiting for the database: first attempt under way';
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const send = (status: number, body: object) => {
      const text = JSON.stringify(body);
      response.writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(text),
        ...(status === 503 ? { 'retry-after': '5' } : {}),
      });
      response.end(text);
    };
    // The request body is not read: drain it so the connection stays usable.
    request.resume();
    if (path === '/healthz') {
      send(200, { status: 'ok' });
    } else if (path === '/readyz') {
      send(503, { status: 'unavailable', reason });
    } else {
      send(503, { message: `Verity is starting: ${reason}` });
    }
  });
  // Probes only: nothing lingers when the real API takes the port over.
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    setReason(r) {
      reason = r;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
