/**
 * What runs now is kept on the current states (`to_index is null`) instead of a table of its own.
 * `runtime_live` held one row per running fingerprint, a copy of its current state's count and
 * instance details but for what moved since the last snapshot (rules 3 and 4: counts and details
 * alone make no snapshot). A rollout of every image wrote each fingerprint twice, once in each
 * table, and deleted the old live rows: about a fifth of the report's time at 50,000 pods.
 *
 * A current state now carries only what moved since it was written: `live_count`,
 * `live_detail_hash` and `live_detail` are null while the fingerprint runs as the state recorded
 * it, and are cleared when the state is closed.
 *
 * `runtime_live` itself is left in place, no longer read or written by this version: on
 * PostgreSQL the chart upgrades replicas one at a time, and the replicas of the version before
 * still write and read it (reports, and the attestation statement's re-evaluation marks) until
 * they stop. A later migration drops it. Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table runtime_states add column live_count integer,
    add column live_detail_hash text, add column live_detail jsonb`.execute(db);
  await sql`update runtime_states s
    set live_count = nullif(l.instance_count, s.instance_count),
      live_detail_hash = nullif(l.detail_hash, s.detail_hash),
      live_detail = case when l.detail_hash = s.detail_hash then null else l.detail end
    from runtime_live l
    where s.org_id = l.org_id and s.environment_id = l.environment_id and s.fingerprint = l.fingerprint
      and s.to_index is null
      and (l.instance_count <> s.instance_count or l.detail_hash <> s.detail_hash)`.execute(db);
}

/** Back to the live rows: `runtime_live` is written anew from the current states. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from runtime_live`.execute(db);
  await sql`insert into runtime_live (org_id, environment_id, fingerprint, name, instance_count, detail_hash, detail)
    select distinct on (s.org_id, s.environment_id, s.fingerprint) s.org_id, s.environment_id, s.fingerprint, s.name,
      coalesce(s.live_count, s.instance_count), coalesce(s.live_detail_hash, s.detail_hash), coalesce(s.live_detail, d.detail)
    from runtime_states s
    join runtime_details d on d.org_id = s.org_id and d.hash = s.detail_hash
    where s.to_index is null
    order by s.org_id, s.environment_id, s.fingerprint, s.from_index desc`.execute(db);
  await sql`alter table runtime_states drop column live_count, drop column live_detail_hash,
    drop column live_detail`.execute(db);
}
