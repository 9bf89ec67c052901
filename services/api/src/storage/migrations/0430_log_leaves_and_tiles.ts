/**
 * The transparency log's leaves move into their entries, and only every fourth level of subtree
 * hashes above them stays stored (usecases/log/merkle.ts, TILE_HEIGHT): appending an entry
 * wrote two `log_nodes` rows on average, now about 1/15 of one. The levels in between are hashed
 * from the stored ones when a proof or root needs them. The tree, its roots and its proofs are
 * unchanged. Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

const TILE_HEIGHT = 4;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table log_entries add column leaf bytea`.execute(db);
  await sql`update log_entries e set leaf = n.hash from log_nodes n
    where n.org_id = e.org_id and n.level = 0 and n.idx = e.index`.execute(db);
  // The sequencer wrote every entry with its leaf in one transaction, so none is missing; a
  // database where one is fails here rather than serve a tree it cannot prove.
  await sql`alter table log_entries alter column leaf set not null`.execute(db);
  await sql`delete from log_nodes where level % ${sql.lit(TILE_HEIGHT)} <> 0 or level = 0`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`insert into log_nodes (org_id, level, idx, hash)
    select org_id, 0, index, leaf from log_entries`.execute(db);
  // Every level again, each from the one below (RFC 9162: SHA-256(0x01 || left || right)).
  for (let level = 1; level < 64; level += 1) {
    const below = await sql<{
      n: string;
    }>`select count(*) as n from log_nodes where level = ${level - 1}`.execute(db);
    if (Number(below.rows[0]?.n ?? 0) < 2) {
      break;
    }
    await sql`insert into log_nodes (org_id, level, idx, hash)
      select l.org_id, ${level}, l.idx / 2, sha256('\\x01'::bytea || l.hash || r.hash)
      from log_nodes l join log_nodes r on r.org_id = l.org_id and r.level = l.level and r.idx = l.idx + 1
      where l.level = ${level - 1} and l.idx % 2 = 0
      on conflict do nothing`.execute(db);
  }
  await sql`alter table log_entries drop column leaf`.execute(db);
}
