/**
 * The triggers that queue every write of a logged table (usecases/log/kinds.ts) into `log_queue`
 * in the write's own transaction, so no write path (a route, the attestation batcher, an admin
 * job, a hand-written statement of the application) can leave a record out of the log.
 *
 * Inserts are queued by a statement-level trigger over the statement's new rows (one insert per
 * statement, however many rows); updates of audit-relevant columns and removals, rare, by
 * row-level triggers. The triggers are generated from the registry and installed when the
 * database is migrated, again only when the registry's DDL changed (its fingerprint is kept in
 * `log_trigger_state`). With the log switched off (`VERITY_TRANSPARENCY_LOG=off`) they are dropped.
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { LOG_KINDS, quoteIdent, recordSql, type LogKind } from '../domain/log-kinds.js';

const PREFIX = 'tlog_';

function kindStatements(k: LogKind): string[] {
  const table = quoteIdent(k.table);
  const name = `${PREFIX}${k.kind}`;
  const kindText = `'${k.kind}'`;
  const out = [
    `create function ${name}_ins() returns trigger language plpgsql as $fn$
begin
  insert into log_queue (org_id, kind, op, row)
    select n.org_id, ${kindText}, 'insert', ${recordSql(k, 'n')} from log_new n;
  return null;
end $fn$`,
    `create trigger ${name}_ins after insert on ${table} referencing new table as log_new
  for each statement execute function ${name}_ins()`,
  ];
  if (k.updates && k.updates.length > 0) {
    const changed = k.updates
      .map((c) => `OLD.${quoteIdent(c)} is distinct from NEW.${quoteIdent(c)}`)
      .join(' or ');
    out.push(
      `create function ${name}_upd() returns trigger language plpgsql as $fn$
begin
  insert into log_queue (org_id, kind, op, row) values (NEW.org_id, ${kindText}, 'update', ${recordSql(k, 'NEW')});
  return null;
end $fn$`,
      `create trigger ${name}_upd after update on ${table} for each row when (${changed})
  execute function ${name}_upd()`,
    );
  }
  if (k.deletes) {
    out.push(
      `create function ${name}_del() returns trigger language plpgsql as $fn$
begin
  insert into log_queue (org_id, kind, op, row) values (OLD.org_id, ${kindText}, 'delete', ${recordSql(k, 'OLD')});
  return null;
end $fn$`,
      `create trigger ${name}_del after delete on ${table} for each row execute function ${name}_del()`,
    );
  }
  return out;
}

/** Every statement that installs the triggers of the registry. */
export function logTriggerStatements(kinds: readonly LogKind[] = LOG_KINDS): string[] {
  return kinds.flatMap(kindStatements);
}

async function dropAll(db: Kysely<unknown>): Promise<void> {
  const triggers = await sql<{ tgname: string; relname: string }>`
    select t.tgname, c.relname from pg_trigger t
    join pg_class c on c.oid = t.tgrelid
    join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and t.tgname like ${`${PREFIX}%`}`.execute(db);
  for (const t of triggers.rows) {
    await sql`drop trigger if exists ${sql.id(t.tgname)} on ${sql.table(t.relname)}`.execute(db);
  }
  const functions = await sql<{ proname: string }>`
    select p.proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = current_schema() and p.proname like ${`${PREFIX}%`}`.execute(db);
  for (const f of functions.rows) {
    await sql`drop function if exists ${sql.id(f.proname)}()`.execute(db);
  }
}

/**
 * Installs (or, with the log off, removes) the log's triggers when they differ from what is
 * installed; returns whether anything changed. Runs under the migration lock.
 */
export async function syncLogTriggers(db: Kysely<unknown>, enabled: boolean): Promise<boolean> {
  const statements = enabled ? logTriggerStatements() : [];
  const fingerprint = enabled ? createHash('sha256').update(statements.join('\n;\n')).digest('hex') : 'off';
  const current = await sql<{
    fingerprint: string;
  }>`select fingerprint from log_trigger_state where id = 1`.execute(db);
  if (current.rows[0]?.fingerprint === fingerprint) {
    return false;
  }
  await db.transaction().execute(async (trx) => {
    await dropAll(trx);
    for (const s of statements) {
      await sql.raw(s).execute(trx);
    }
    await sql`insert into log_trigger_state (id, fingerprint) values (1, ${fingerprint})
      on conflict (id) do update set fingerprint = excluded.fingerprint`.execute(trx);
  });
  return true;
}
