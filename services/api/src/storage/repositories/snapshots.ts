/**
 * Reading snapshots (see tables/runtime.ts for the storage model): one snapshot, a range, the
 * states valid at one with their verdicts, the instance details they recorded, and the
 * environment events (changes and exits) between two snapshots.
 */
import { sql, type Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { InstanceDetail, RuntimeSnapshotsTable } from '../tables/runtime.js';
import { chunks, STATE_COLUMNS, type StateWithVerdict } from './runtime.js';

export type SnapshotRow = Selectable<RuntimeSnapshotsTable>;

/** The snapshots of one environment. */
const snapshotsOf = (db: Db, orgId: string, envId: string) =>
  db.selectFrom('runtime_snapshots').where('org_id', '=', orgId).where('environment_id', '=', envId);

export const snapshotsRepository = {
  async snapshot(db: Db, orgId: string, envId: string, index: number): Promise<SnapshotRow | undefined> {
    return snapshotsOf(db, orgId, envId).selectAll().where('index', '=', index).executeTakeFirst();
  },

  /** The number of the latest snapshot taken at or before `at`, if any. */
  async indexAt(db: Db, orgId: string, envId: string, at: Date): Promise<number | undefined> {
    const row = await snapshotsOf(db, orgId, envId)
      .select('index')
      .where('created_at', '<=', at)
      .orderBy('created_at', 'desc')
      .orderBy('index', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row?.index;
  },

  async snapshotsBetween(
    db: Db,
    orgId: string,
    envId: string,
    from: number,
    to: number,
  ): Promise<SnapshotRow[]> {
    return snapshotsOf(db, orgId, envId)
      .selectAll()
      .where('index', '>=', from)
      .where('index', '<=', to)
      .orderBy('index')
      .execute();
  },

  /** Artifacts running in each environment's given snapshot, by environment id. */
  async artifactCounts(
    db: Db,
    orgId: string,
    at: ReadonlyArray<{ envId: string; index: number }>,
  ): Promise<Map<string, number>> {
    if (at.length === 0) {
      return new Map();
    }
    const rows = await db
      .selectFrom('runtime_snapshots')
      .select(['environment_id', 'artifact_count'])
      .where('org_id', '=', orgId)
      .where((eb) =>
        eb.or(at.map((a) => eb.and([eb('environment_id', '=', a.envId), eb('index', '=', a.index)]))),
      )
      .execute();
    return new Map(rows.map((r) => [r.environment_id, r.artifact_count]));
  },

  /** States valid at snapshot `index`, and those that exited there, with their verdicts. */
  async statesAt(db: Db, orgId: string, envId: string, index: number): Promise<StateWithVerdict[]> {
    return db
      .selectFrom('runtime_states as s')
      .innerJoin('runtime_verdicts as v', (j) =>
        j.onRef('v.org_id', '=', 's.org_id').onRef('v.hash', '=', 's.verdict_hash'),
      )
      .select(STATE_COLUMNS)
      .select(['v.compliant', 'v.provenance', 'v.decisions', 'v.reasons', 'v.allowlisted'])
      .where('s.org_id', '=', orgId)
      .where('s.environment_id', '=', envId)
      .where('s.from_index', '<=', index)
      .where((eb) =>
        eb.or([
          eb('s.to_index', 'is', null),
          eb('s.to_index', '>', index),
          eb.and([eb('s.to_index', '=', index), eb('s.exited', '=', true)]),
        ]),
      )
      .orderBy('s.name')
      .orderBy('s.fingerprint')
      .execute();
  },

  /**
   * Every state valid at some snapshot from `from` to `to`, with its verdict, in order of its
   * first snapshot: one read for a range, which the caller sweeps.
   */
  async statesOverlapping(
    db: Db,
    orgId: string,
    envId: string,
    from: number,
    to: number,
  ): Promise<StateWithVerdict[]> {
    return db
      .selectFrom('runtime_states as s')
      .innerJoin('runtime_verdicts as v', (j) =>
        j.onRef('v.org_id', '=', 's.org_id').onRef('v.hash', '=', 's.verdict_hash'),
      )
      .select(STATE_COLUMNS)
      .select(['v.compliant', 'v.provenance', 'v.decisions', 'v.reasons', 'v.allowlisted'])
      .where('s.org_id', '=', orgId)
      .where('s.environment_id', '=', envId)
      .where('s.from_index', '<=', to)
      .where((eb) => eb.or([eb('s.to_index', 'is', null), eb('s.to_index', '>', from)]))
      .orderBy('s.from_index')
      .orderBy('s.name')
      .orderBy('s.fingerprint')
      .execute();
  },

  /** Instance details recorded with the states valid at `index` (only those that exited there, with `exitedOnly`). */
  async detailsAt(
    db: Db,
    orgId: string,
    envId: string,
    index: number,
    exitedOnly = false,
  ): Promise<Map<string, InstanceDetail[]>> {
    const rows = await db
      .selectFrom('runtime_details as d')
      .select(['d.hash', 'd.detail'])
      .where('d.org_id', '=', orgId)
      .where('d.hash', 'in', (eb) =>
        eb
          .selectFrom('runtime_states as s')
          .select('s.detail_hash')
          .where('s.org_id', '=', orgId)
          .where('s.environment_id', '=', envId)
          .where('s.from_index', '<=', index)
          .where((w) =>
            exitedOnly
              ? w.and([w('s.to_index', '=', index), w('s.exited', '=', true)])
              : w.or([w('s.to_index', 'is', null), w('s.to_index', '>=', index)]),
          ),
      )
      .execute();
    return new Map(rows.map((r) => [r.hash, r.detail]));
  },

  async details(db: Db, orgId: string, hashes: readonly string[]): Promise<Map<string, InstanceDetail[]>> {
    const out = new Map<string, InstanceDetail[]>();
    for (const part of chunks([...new Set(hashes)])) {
      const rows = await db
        .selectFrom('runtime_details')
        .select(['hash', 'detail'])
        .where('org_id', '=', orgId)
        .where('hash', 'in', part)
        .execute();
      for (const r of rows) {
        out.set(r.hash, r.detail);
      }
    }
    return out;
  },

  /** How many environment events (changes and exits) match `f` (`GET .../events`). */
  async countEvents(db: Db, orgId: string, envId: string, f: EventsFilter): Promise<number> {
    const { rows } = await sql<{ n: string | number }>`
      with ev as (${eventsOf(orgId, envId, f)})
      select count(*) as n from ev ${eventsWhere(f)}`.execute(db);
    return Number(rows[0]?.n ?? 0);
  },

  /**
   * The events at positions [a, b) of `f`'s events in snapshot order, read from SQL: whole
   * snapshots from the one holding position a to the one holding position b - 1, and `before`,
   * the number of events in earlier snapshots, so the caller orders within a snapshot and slices.
   */
  async eventsWindow(
    db: Db,
    orgId: string,
    envId: string,
    f: EventsFilter,
    a: number,
    b: number,
  ): Promise<{ rows: EventRow[]; before: number }> {
    const at = async (position: number) => {
      const { rows } = await sql<{ event_index: number }>`
        with ev as (${eventsOf(orgId, envId, f)})
        select event_index from ev ${eventsWhere(f)}
        order by event_index limit 1 offset ${position}`.execute(db);
      return rows[0]?.event_index;
    };
    const [first, last] = await Promise.all([at(a), at(b - 1)]);
    if (first === undefined || last === undefined) {
      return { rows: [], before: 0 };
    }
    const window = { ...f, from: first, to: last };
    const [{ rows }, before] = await Promise.all([
      sql<EventRow>`
        with ev as (${eventsOf(orgId, envId, window)})
        select ev.*, v.compliant, v.provenance, v.decisions, v.reasons, v.allowlisted,
               sn.created_at as snapshot_created_at, sn.compliant as snapshot_compliant
        from ev
        join runtime_verdicts v on v.org_id = ev.org_id and v.hash = ev.verdict_hash
        ${eventsWhere(f)}`.execute(db),
      first > f.from ? this.countEvents(db, orgId, envId, { ...f, to: first - 1 }) : Promise.resolve(0),
    ]);
    return { rows, before };
  },
};

/** Which events `GET /environments/{org}/{env}/events` reads: snapshots and times, repos. */
export interface EventsFilter {
  /** Snapshot indexes, inclusive. */
  from: number;
  to: number;
  /** Times of the snapshots, inclusive. */
  fromTime?: Date | undefined;
  toTime?: Date | undefined;
  /** Only fingerprints reported from one of these repos (non-empty). */
  repoIds?: readonly string[] | undefined;
}

/** One event: the state, its verdict, and the snapshot it happened in. */
export type EventRow = StateWithVerdict & {
  event_index: number;
  kind: 'change' | 'exit';
  snapshot_created_at: Date;
  snapshot_compliant: boolean | null;
};

/** States that changed at a snapshot of [from, to], and those that exited at one. */
function eventsOf(orgId: string, envId: string, f: EventsFilter) {
  return sql`
    select s.*, s.from_index as event_index, 'change' as kind
    from runtime_states s
    where s.org_id = ${orgId} and s.environment_id = ${envId}
      and s.from_index >= ${f.from} and s.from_index <= ${f.to}
      and (s.change <> 'unchanged' or s.was_count <> s.instance_count)
    union all
    select s.*, s.to_index as event_index, 'exit' as kind
    from runtime_states s
    where s.org_id = ${orgId} and s.environment_id = ${envId}
      and s.exited and s.to_index >= ${f.from} and s.to_index <= ${f.to}`;
}

/** The snapshot join and the time and repo conditions over `ev`. */
function eventsWhere(f: EventsFilter) {
  const conditions = [sql`true`];
  if (f.fromTime) {
    conditions.push(sql`sn.created_at >= ${f.fromTime}`);
  }
  if (f.toTime) {
    conditions.push(sql`sn.created_at <= ${f.toTime}`);
  }
  if (f.repoIds) {
    conditions.push(sql`ev.fingerprint in (
      select a.fingerprint from artifacts a
      where a.org_id = ev.org_id and a.repo_id in (${sql.join([...f.repoIds])}))`);
  }
  return sql`
    join runtime_snapshots sn
      on sn.org_id = ev.org_id and sn.environment_id = ev.environment_id and sn.index = ev.event_index
    where ${sql.join(conditions, sql` and `)}`;
}
