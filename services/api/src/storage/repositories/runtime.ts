/**
 * What runs in environments now (`runtime_live`), its history as states valid over snapshot
 * ranges (`runtime_states`), the snapshots themselves, and the content-addressed instance
 * details and verdicts they share. See tables/runtime.ts for the storage model.
 */
import { sql, type Insertable, type Selectable } from 'kysely';
import type { Db } from '../database.js';
import type {
  AppliedPolicyRef,
  InstanceDetail,
  RuntimeSnapshotsTable,
  RuntimeStatesTable,
  StateChange,
} from '../tables/runtime.js';

export type SnapshotRow = Selectable<RuntimeSnapshotsTable>;
export type StateRow = Selectable<RuntimeStatesTable>;

/** A state with its verdict, as snapshot reads present it. */
export interface StateWithVerdict extends StateRow {
  compliant: boolean | null;
  provenance: unknown[];
  decisions: unknown[];
  reasons: string[];
  allowlisted: boolean;
}

export interface NewState {
  fingerprint: string;
  from_index: number;
  name: string;
  instance_count: number;
  was_count: number;
  change: StateChange;
  detail_hash: string;
  verdict_hash: string;
  run_start: number;
}

export interface NewVerdict {
  hash: string;
  compliant: boolean | null;
  provenance: unknown[];
  decisions: unknown[];
  reasons: string[];
  allowlisted: boolean;
}

const CHUNK = 500;
function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

export const runtimeRepository = {
  /** The live state without instance details: enough to diff a report. */
  async live(
    db: Db,
    orgId: string,
    envId: string,
  ): Promise<Array<{ fingerprint: string; name: string; instance_count: number; detail_hash: string }>> {
    return db
      .selectFrom('runtime_live')
      .select(['fingerprint', 'name', 'instance_count', 'detail_hash'])
      .where('org_id', '=', orgId)
      .where('environment_id', '=', envId)
      .execute();
  },

  async liveDetails(
    db: Db,
    orgId: string,
    envId: string,
  ): Promise<Map<string, { detail: InstanceDetail[]; instance_count: number; detail_hash: string }>> {
    const rows = await db
      .selectFrom('runtime_live')
      .select(['fingerprint', 'detail', 'instance_count', 'detail_hash'])
      .where('org_id', '=', orgId)
      .where('environment_id', '=', envId)
      .execute();
    return new Map(rows.map((r) => [r.fingerprint, r]));
  },

  async upsertLive(
    db: Db,
    orgId: string,
    envId: string,
    rows: ReadonlyArray<{
      fingerprint: string;
      name: string;
      instance_count: number;
      detail_hash: string;
      detail: string;
    }>,
  ): Promise<void> {
    for (const part of chunks(rows)) {
      await db
        .insertInto('runtime_live')
        .values(part.map((r) => ({ ...r, org_id: orgId, environment_id: envId })))
        .onConflict((oc) =>
          oc.columns(['org_id', 'environment_id', 'fingerprint']).doUpdateSet((eb) => ({
            name: eb.ref('excluded.name'),
            instance_count: eb.ref('excluded.instance_count'),
            detail_hash: eb.ref('excluded.detail_hash'),
            detail: eb.ref('excluded.detail'),
          })),
        )
        .execute();
    }
  },

  async deleteLive(db: Db, orgId: string, envId: string, fingerprints: readonly string[]): Promise<void> {
    for (const part of chunks(fingerprints)) {
      await db
        .deleteFrom('runtime_live')
        .where('org_id', '=', orgId)
        .where('environment_id', '=', envId)
        .where('fingerprint', 'in', part)
        .execute();
    }
  },

  /** Environments where any of the fingerprints runs now. */
  async environmentsRunning(db: Db, orgId: string, fingerprints: readonly string[]): Promise<string[]> {
    if (fingerprints.length === 0) return [];
    const rows = await db
      .selectFrom('runtime_live')
      .select('environment_id')
      .distinct()
      .where('org_id', '=', orgId)
      .where('fingerprint', 'in', [...fingerprints])
      .execute();
    return rows.map((r) => r.environment_id);
  },

  async insertDetails(
    db: Db,
    orgId: string,
    rows: ReadonlyArray<{ hash: string; detail: string }>,
  ): Promise<void> {
    const unique = [...new Map(rows.map((r) => [r.hash, r])).values()];
    for (const part of chunks(unique)) {
      await db
        .insertInto('runtime_details')
        .values(part.map((r) => ({ org_id: orgId, hash: r.hash, detail: r.detail })))
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
  },

  async insertVerdicts(db: Db, orgId: string, rows: readonly NewVerdict[]): Promise<void> {
    const unique = [...new Map(rows.map((r) => [r.hash, r])).values()];
    for (const part of chunks(unique)) {
      await db
        .insertInto('runtime_verdicts')
        .values(
          part.map((v) => ({
            org_id: orgId,
            hash: v.hash,
            compliant: v.compliant,
            provenance: JSON.stringify(v.provenance),
            decisions: JSON.stringify(v.decisions),
            reasons: JSON.stringify(v.reasons),
            allowlisted: v.allowlisted,
          })),
        )
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
  },

  /** Current states (still valid), with their verdicts' compliance. */
  async currentStates(
    db: Db,
    orgId: string,
    envId: string,
  ): Promise<Array<StateRow & { compliant: boolean | null; provenance: unknown[] }>> {
    return db
      .selectFrom('runtime_states as s')
      .innerJoin('runtime_verdicts as v', (j) =>
        j.onRef('v.org_id', '=', 's.org_id').onRef('v.hash', '=', 's.verdict_hash'),
      )
      .selectAll('s')
      .select(['v.compliant', 'v.provenance'])
      .where('s.org_id', '=', orgId)
      .where('s.environment_id', '=', envId)
      .where('s.to_index', 'is', null)
      .execute();
  },

  /** Ends the current states of fingerprints that stopped running at `toIndex`. */
  async closeExits(
    db: Db,
    orgId: string,
    envId: string,
    exits: ReadonlyArray<{ fingerprint: string; count: number }>,
    toIndex: number,
  ): Promise<void> {
    const byCount = new Map<number, string[]>();
    for (const e of exits) byCount.set(e.count, [...(byCount.get(e.count) ?? []), e.fingerprint]);
    for (const [count, fingerprints] of byCount) {
      for (const part of chunks(fingerprints)) {
        await db
          .updateTable('runtime_states')
          .set({ to_index: toIndex, exited: true, exit_count: count })
          .where('org_id', '=', orgId)
          .where('environment_id', '=', envId)
          .where('to_index', 'is', null)
          .where('fingerprint', 'in', part)
          .execute();
      }
    }
  },

  async closeStates(
    db: Db,
    orgId: string,
    envId: string,
    fingerprints: readonly string[],
    toIndex: number,
  ): Promise<void> {
    for (const part of chunks(fingerprints)) {
      await db
        .updateTable('runtime_states')
        .set({ to_index: toIndex })
        .where('org_id', '=', orgId)
        .where('environment_id', '=', envId)
        .where('to_index', 'is', null)
        .where('fingerprint', 'in', part)
        .execute();
    }
  },

  async insertStates(db: Db, orgId: string, envId: string, rows: readonly NewState[]): Promise<void> {
    for (const part of chunks(rows)) {
      await db
        .insertInto('runtime_states')
        .values(
          part.map((r): Insertable<RuntimeStatesTable> => ({ ...r, org_id: orgId, environment_id: envId })),
        )
        .execute();
    }
  },

  async insertSnapshot(
    db: Db,
    row: Omit<Insertable<RuntimeSnapshotsTable>, 'applied_policies'> & {
      applied_policies: AppliedPolicyRef[];
    },
  ): Promise<void> {
    await db
      .insertInto('runtime_snapshots')
      .values({ ...row, applied_policies: JSON.stringify(row.applied_policies) })
      .execute();
  },

  async snapshot(db: Db, orgId: string, envId: string, index: number): Promise<SnapshotRow | undefined> {
    return db
      .selectFrom('runtime_snapshots')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('environment_id', '=', envId)
      .where('index', '=', index)
      .executeTakeFirst();
  },

  /** The number of the latest snapshot taken at or before `at`, if any. */
  async indexAt(db: Db, orgId: string, envId: string, at: Date): Promise<number | undefined> {
    const row = await db
      .selectFrom('runtime_snapshots')
      .select('index')
      .where('org_id', '=', orgId)
      .where('environment_id', '=', envId)
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
    return db
      .selectFrom('runtime_snapshots')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('environment_id', '=', envId)
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
    if (at.length === 0) return new Map();
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
      .selectAll('s')
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
      for (const r of rows) out.set(r.hash, r.detail);
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
    if (first === undefined || last === undefined) return { rows: [], before: 0 };
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

  async addMarks(
    db: Db,
    marks: ReadonlyArray<{
      org_id: string;
      id: string;
      environment_id: string;
      marked_at: Date;
      reason: string;
    }>,
  ): Promise<void> {
    if (marks.length === 0) return;
    await db
      .insertInto('reevaluation_marks')
      .values([...marks])
      .execute();
  },

  /** Claims one environment with pending marks (skipping those another worker holds). */
  async claimMarkedEnvironment(db: Db): Promise<{ org_id: string; environment_id: string } | undefined> {
    return db
      .selectFrom('reevaluation_marks')
      .select(['org_id', 'environment_id'])
      .orderBy('marked_at')
      .limit(1)
      .forUpdate()
      .skipLocked()
      .executeTakeFirst();
  },

  /** Claims every pending mark of one environment; returns their ids. */
  async claimMarks(db: Db, orgId: string, envId: string): Promise<string[]> {
    const rows = await db
      .selectFrom('reevaluation_marks')
      .select('id')
      .where('org_id', '=', orgId)
      .where('environment_id', '=', envId)
      .forUpdate()
      .skipLocked()
      .execute();
    return rows.map((r) => r.id);
  },

  async deleteMarks(db: Db, orgId: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await db
      .deleteFrom('reevaluation_marks')
      .where('org_id', '=', orgId)
      .where('id', 'in', [...ids])
      .execute();
  },

  /** Bytes the runtime tables hold (for the benchmark's growth figure). */
  async storageBytes(db: Db): Promise<number> {
    const tables = [
      'runtime_live',
      'runtime_states',
      'runtime_snapshots',
      'runtime_details',
      'runtime_verdicts',
      'environments',
      'outbox',
    ];
    const row = await sql<{ bytes: number }>`select sum(pg_total_relation_size(c.oid))::bigint as bytes
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relname in (${sql.join(tables)})`.execute(db);
    return Number(row.rows[0]?.bytes ?? 0);
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
  if (f.fromTime) conditions.push(sql`sn.created_at >= ${f.fromTime}`);
  if (f.toTime) conditions.push(sql`sn.created_at <= ${f.toTime}`);
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
