/**
 * Waiting for the database at start: what `/readyz` says of a failed attempt (never an address),
 * which failures are waited out, and that anything else ends the wait.
 */
import { describe, expect, it } from 'vitest';
import { describeFailure, untilDatabase } from '../../services/api/src/database-wait.js';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('describeFailure', () => {
  it.each([
    [withCode('connect ECONNREFUSED 10.1.2.3:5432', 'ECONNREFUSED'), 'connection refused'],
    [withCode('getaddrinfo ENOTFOUND db.internal', 'ENOTFOUND'), 'host name not found'],
    [
      new AggregateError([
        withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED'),
        withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      ]),
      'connection refused',
    ],
    [
      withCode('password authentication failed for user "verity"', '28P01'),
      'password authentication failed for user "verity" (SQLSTATE 28P01)',
    ],
    [new Error('timeout exceeded when trying to connect'), 'timeout exceeded when trying to connect'],
    [
      new Error('Connection terminated unexpectedly at 10.0.0.7:5432'),
      'Connection terminated unexpectedly at the server',
    ],
    ['a string', 'unknown error'],
  ])('%s -> %s', (err, reason) => {
    expect(describeFailure(err)).toBe(reason);
  });
});

describe('untilDatabase', () => {
  const quiet = { warn: () => undefined, error: () => undefined };

  it('retries an unreachable or refusing database, reporting each failure, until it opens', async () => {
    const failures = [
      withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      withCode('database "verity" does not exist', '3D000'),
    ];
    const messages: string[] = [];
    const logged: string[] = [];
    const result = await untilDatabase(
      async () => {
        const next = failures.shift();
        if (next) {
          throw next;
        }
        return 'open';
      },
      {
        log: { warn: (_o, m) => logged.push(`warn ${m}`), error: (_o, m) => logged.push(`error ${m}`) },
        onFailure: (m) => messages.push(m),
        signal: new AbortController().signal,
      },
    );
    expect(result).toBe('open');
    expect(messages).toEqual([
      'database not reachable yet: connection refused; retrying',
      'the database refuses the connection: database "verity" does not exist (SQLSTATE 3D000); retrying',
    ]);
    expect(logged[1]).toMatch(/^error .*check DATABASE_URL; retrying$/);
  });

  it('ends the wait on any other error (a failing migration)', async () => {
    const broken = withCode('syntax error at or near "tabel"', '42601');
    await expect(
      untilDatabase(
        async () => {
          throw broken;
        },
        { log: quiet, onFailure: () => undefined, signal: new AbortController().signal },
      ),
    ).rejects.toBe(broken);
  });

  it('stops waiting when the signal aborts', async () => {
    const stop = new AbortController();
    const waiting = untilDatabase(
      async () => {
        stop.abort();
        throw withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED');
      },
      { log: quiet, onFailure: () => undefined, signal: stop.signal },
    );
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
  });
});
