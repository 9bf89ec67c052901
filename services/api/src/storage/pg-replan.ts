/**
 * The one place that writes the `pg` driver's internals (docs/decisions/0003-prepared-plan-replanning.md).
 *
 * `pg` remembers, per connection, the named statements it has parsed on the server
 * (`connection.parsedStatements`) or sent for parsing (`connection.submittedNamedStatements`),
 * and from then on sends such a statement without parsing it again. After `deallocate all` the
 * server no longer has them, and the driver offers no public way to forget them: so this module
 * empties both records itself.
 *
 * Checked against pg 8.23.1 (lib/connection.js creates both records, lib/query.js reads them in
 * `submit` and `hasBeenParsed`, lib/client.js updates them on parse and on error).
 * test/unit/pg-replan.test.ts pins these fields on a live connection, and
 * test/integration/prepared-statements.test.ts checks that replanning still works through them:
 * a `pg` upgrade that renames or drops them fails those tests.
 */
import type pg from 'pg';

/** The fields of `pg`'s connection object written here. */
export const PG_PARSED_STATEMENT_RECORDS = ['parsedStatements', 'submittedNamedStatements'] as const;

type ParsedStatementRecords = Record<(typeof PG_PARSED_STATEMENT_RECORDS)[number], Record<string, string>>;

/** The connection's records of parsed statements, or the reason it has none where they were checked. */
function recordsOf(client: pg.ClientBase): ParsedStatementRecords {
  const connection = (client as unknown as { connection?: Record<string, unknown> }).connection;
  const missing = PG_PARSED_STATEMENT_RECORDS.filter(
    (field) => typeof connection?.[field] !== 'object' || connection[field] === null,
  );
  if (!connection || missing.length > 0) {
    throw new Error(
      `this pg driver has no connection.${missing.join(', connection.')}: prepared statements cannot be ` +
        'planned again (see storage/pg-replan.ts)',
    );
  }
  return connection as unknown as ParsedStatementRecords;
}

/**
 * Drops every prepared statement of a connection: on the server (`deallocate all`, through
 * `run`, the connection's own query function) and in the driver's record of them, so that the
 * next run of each statement is parsed and planned again. When the driver does not keep that
 * record where it was checked, it throws before deallocating anything: the statements then stay
 * prepared, and keep answering with the plans they have.
 */
export async function deallocateAll(
  client: pg.ClientBase,
  run: (text: string) => Promise<unknown>,
): Promise<void> {
  const records = recordsOf(client);
  await run('deallocate all');
  for (const field of PG_PARSED_STATEMENT_RECORDS) {
    records[field] = {};
  }
}
