/**
 * Prepared statements are planned again by writing two internals of the `pg` driver
 * (storage/pg-replan.ts). These tests pin them on a live connection, so a `pg` upgrade that
 * renames or drops them fails here by name instead of in production with "prepared statement
 * ... does not exist". They need a PostgreSQL server (TEST_DATABASE_URL, or the local default)
 * and create nothing in it; without one they are skipped, except under CI=true where they fail.
 */
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PG_PARSED_STATEMENT_RECORDS, deallocateAll } from '../../services/api/src/storage/pg-replan.js';

const URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

async function reachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: URL, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    return true;
  } catch (err) {
    if (process.env.CI === 'true') {
      throw new Error(`PostgreSQL at ${URL} is needed to pin the pg driver's internals: ${String(err)}`);
    }
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const onServer = await reachable();
const PROBE = { name: 'pg_replan_probe', text: 'select $1::int + 1 as n', values: [1] };

let client: pg.Client;
beforeEach(async () => {
  client = new pg.Client({ connectionString: URL });
  await client.connect();
});
afterEach(async () => client?.end());

/** How often the server has planned the probe since it was prepared; null when it is not prepared. */
async function planned(): Promise<number | null> {
  const { rows } = await client.query<{ n: number }>(
    'select (generic_plans + custom_plans)::int as n from pg_prepared_statements where name = $1',
    [PROBE.name],
  );
  return rows[0]?.n ?? null;
}

/** The driver's connection object, where it keeps its record of parsed statements. */
const connectionOf = (c: pg.Client) => (c as unknown as { connection: Record<string, unknown> }).connection;

describe.runIf(onServer)(`the pg driver internals that storage/pg-replan.ts writes (pg at ${URL})`, () => {
  it('are where they were checked: the connection records the named statements it parsed', async () => {
    await client.query(PROBE);
    const connection = connectionOf(client);
    for (const field of PG_PARSED_STATEMENT_RECORDS) {
      expect(
        typeof connection[field] === 'object' && connection[field] !== null,
        `pg's connection.${field} is gone or renamed: update storage/pg-replan.ts (docs/decisions/0003)`,
      ).toBe(true);
    }
    expect(
      connection.parsedStatements,
      'pg no longer records a parsed statement in connection.parsedStatements: update storage/pg-replan.ts',
    ).toEqual({ [PROBE.name]: PROBE.text });
  });

  it('replans: after deallocateAll the next run of a statement is prepared and planned anew', async () => {
    for (let i = 0; i < 6; i++) {
      expect((await client.query(PROBE)).rows).toEqual([{ n: 2 }]);
    }
    expect(await planned()).toBe(6);
    await deallocateAll(client, (text) => client.query(text));
    expect(await planned()).toBeNull();
    // The driver parses it again instead of running a statement the server no longer has.
    expect((await client.query(PROBE)).rows).toEqual([{ n: 2 }]);
    expect(await planned()).toBe(1);
  });

  it('refuses, deallocating nothing, when the driver keeps no record where it was checked', async () => {
    await client.query(PROBE);
    // As a pg release that renamed the field would have it.
    const connection = connectionOf(client);
    const submitted = connection.submittedNamedStatements;
    delete connection.submittedNamedStatements;
    await expect(deallocateAll(client, (text) => client.query(text))).rejects.toThrow(
      /this pg driver has no connection\.submittedNamedStatements/,
    );
    connection.submittedNamedStatements = submitted;
    // The statement is still prepared, so the driver's record still matches the server.
    expect(await planned()).toBe(1);
    expect((await client.query(PROBE)).rows).toEqual([{ n: 2 }]);
  });
});
