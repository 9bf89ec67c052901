/** The event log of each trail: what `GET /trails/...` shows as `events[]`, and artifact history. */
import { sql, type Insertable, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { TrailEventsTable } from '../tables/evidence.js';

export type TrailEventRow = Selectable<TrailEventsTable>;

/**
 * What an artifact's history and runtime places read of an event (usecases/evidence/artifacts.ts
 * `historyLine`, `runtimeFromHistory`): its data without HISTORY_UNREAD_KEYS.
 */
export type HistoryEventRow = Pick<TrailEventRow, 'seq' | 'type' | 'occurred_at' | 'data'>;

/**
 * Keys of an event's data that no history line or runtime place reads. An artifact holds an event
 * per attestation reported to it, and its answer lists them all: these stay in the database.
 */
export const HISTORY_UNREAD_KEYS = [
  'attestation_id',
  'artifact_fingerprint',
  'artifact_id',
  'artifact_name',
  'git_commit',
  'git_commit_info',
  'target_artifact',
] as const;

/** The event's data (`data` of the row `alias`) as a history reads it, for a select list. */
export function historyData(alias: string): RawBuilder<Record<string, unknown>> {
  const keys = sql.join(HISTORY_UNREAD_KEYS.map((k) => sql`${k}::text`));
  return sql<Record<string, unknown>>`${sql.ref(`${alias}.data`)} - array[${keys}]`;
}

/** The most recent events an artifact's answer shows in its history, besides its first. */
export const HISTORY_RECENT = 100;

/**
 * The events that say where an artifact runs (`running`) and ran (`exited`), as literals: the
 * predicate of their partial index (migration 0382), which a parameter could not match.
 */
const RUNTIME_EVENT_TYPES = sql.raw(`'artifact_started_running', 'artifact_stopped_running'`);

/** An artifact's history as its answer shows it. */
export interface ArtifactHistoryRows {
  /** Its first event and its HISTORY_RECENT most recent, in order (all of them when fewer). */
  events: HistoryEventRow[];
  /** Its latest runtime event in each environment, in order: where it runs and where it ran. */
  places: HistoryEventRow[];
  /** Its events in all: every event of a fingerprint in a trail is a line of its history. */
  total: number;
}

/** The columns `artifactHistoryColumns` selects. */
export interface HistoryColumns {
  event_rows: unknown[];
  place_rows: unknown[];
  event_total: number;
}

/**
 * Select-list columns with the history of the artifact with these org, trail and fingerprint
 * (values, or references to an outer query's columns): `event_rows`, `place_rows` and
 * `event_total` (ArtifactHistoryRows). Each reads the (org_id, trail_id, fingerprint, seq) index
 * for what it shows: the first entry, the last HISTORY_RECENT, an index-only count, and the
 * runtime events through their partial index (migration 0382). An artifact attested forty
 * thousand times is read as fast as one attested ten times.
 */
export function artifactHistoryColumns(
  orgId: RawBuilder<unknown>,
  trailId: RawBuilder<unknown>,
  fingerprint: RawBuilder<unknown>,
): RawBuilder<unknown> {
  const key = sql`e.org_id = ${orgId} and e.trail_id = ${trailId} and e.fingerprint = ${fingerprint}`;
  const line = sql`e.seq, e.type, e.occurred_at, ${historyData('e')} as data`;
  return sql`
    (select coalesce(json_agg(h order by h.seq), '[]'::json) from (
      select distinct on (u.seq) u.* from (
        (select ${line} from trail_events e where ${key} order by e.seq limit 1)
        union all
        (select ${line} from trail_events e where ${key} order by e.seq desc limit ${HISTORY_RECENT})
      ) u order by u.seq
    ) h) as event_rows,
    (select coalesce(json_agg(r order by r.seq), '[]'::json) from (
      select distinct on (e.data ->> 'environment_name') ${line} from trail_events e
      where ${key} and e.type in (${RUNTIME_EVENT_TYPES})
      order by e.data ->> 'environment_name', e.seq desc
    ) r) as place_rows,
    (select count(*)::int from trail_events e where ${key}) as event_total`;
}

const withOccurredAt = (rows: unknown[]): HistoryEventRow[] =>
  (rows as Array<HistoryEventRow & { occurred_at: Date | string }>).map((e) => ({
    ...e,
    occurred_at: new Date(e.occurred_at),
  }));

/** The history of the columns `artifactHistoryColumns` selected. */
export function fromHistoryColumns(row: HistoryColumns): ArtifactHistoryRows {
  return {
    events: withOccurredAt(row.event_rows),
    places: withOccurredAt(row.place_rows),
    total: Number(row.event_total),
  };
}

/** How many trail events (as `e`) match `key`: index entries only, one per event. */
async function countEvents(db: Db, key: RawBuilder<unknown>): Promise<number> {
  const r = await sql<{ n: number }>`select count(*)::int as n from trail_events e where ${key}`.execute(db);
  return r.rows[0]?.n ?? 0;
}

export const trailEventsRepository = {
  async insert(db: Db, rows: ReadonlyArray<Insertable<TrailEventsTable>>): Promise<void> {
    if (rows.length === 0) {
      return;
    }
    await db
      .insertInto('trail_events')
      .values([...rows])
      .execute();
  },

  /**
   * What a trail's answer shows of its events: its first and its HISTORY_RECENT most recent, in
   * order (all of them when it has no more), and how many it has. Each part reads the key
   * (org_id, trail_id, seq) for what it shows, and the count its entries only, so a trail of
   * forty thousand attestations answers with 101 events, not forty thousand.
   */
  async trailView(
    db: Db,
    orgId: string,
    trailId: string,
  ): Promise<{ events: TrailEventRow[]; total: number }> {
    const key = sql`e.org_id = ${orgId} and e.trail_id = ${trailId}`;
    const [events, total] = await Promise.all([
      sql<TrailEventRow>`select distinct on (u.seq) u.* from (
          (select e.* from trail_events e where ${key} order by e.seq limit 1)
          union all
          (select e.* from trail_events e where ${key} order by e.seq desc limit ${HISTORY_RECENT})
        ) u order by u.seq`.execute(db),
      countEvents(db, key),
    ]);
    return { events: events.rows, total };
  },

  /** A page of a trail's events, oldest first, and how many it has. */
  async trailPage(
    db: Db,
    orgId: string,
    trailId: string,
    page: { limit: number; offset: number },
  ): Promise<{ events: TrailEventRow[]; total: number }> {
    const [events, total] = await Promise.all([
      db
        .selectFrom('trail_events')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('trail_id', '=', trailId)
        .orderBy('seq')
        .limit(page.limit)
        .offset(page.offset)
        .execute(),
      countEvents(db, sql`e.org_id = ${orgId} and e.trail_id = ${trailId}`),
    ]);
    return { events, total };
  },

  async listForTrail(db: Db, orgId: string, trailId: string): Promise<TrailEventRow[]> {
    return db
      .selectFrom('trail_events')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('trail_id', '=', trailId)
      .orderBy('seq')
      .execute();
  },

  /**
   * The history of each of these artifacts (a fingerprint in a trail) as its answer shows it
   * (`artifactHistoryColumns`), one statement for all.
   */
  async forArtifacts(
    db: Db,
    orgId: string,
    pairs: ReadonlyArray<{ trailId: string; fingerprint: string }>,
  ): Promise<Array<{ trail_id: string; fingerprint: string; history: ArtifactHistoryRows }>> {
    if (pairs.length === 0) {
      return [];
    }
    const records = pairs.map((p) => ({ t: p.trailId, f: p.fingerprint }));
    const result = await sql<HistoryColumns & { trail_id: string; fingerprint: string }>`
      select p.t as trail_id, p.f as fingerprint,
        ${artifactHistoryColumns(sql`${orgId}`, sql.ref('p.t'), sql.ref('p.f'))}
      from jsonb_to_recordset(${JSON.stringify(records)}::jsonb) as p(t text, f text)`.execute(db);
    return result.rows.map((r) => ({
      trail_id: r.trail_id,
      fingerprint: r.fingerprint,
      history: fromHistoryColumns(r),
    }));
  },

  /**
   * A page of one artifact's whole history (a fingerprint in a trail), oldest first, read in
   * order from the (org_id, trail_id, fingerprint, seq) index, and its events in all.
   */
  async historyPage(
    db: Db,
    orgId: string,
    artifact: { trailId: string; fingerprint: string },
    page: { limit: number; offset: number },
  ): Promise<{ events: HistoryEventRow[]; total: number }> {
    const key = sql`e.org_id = ${orgId} and e.trail_id = ${artifact.trailId}
      and e.fingerprint = ${artifact.fingerprint}`;
    const [events, total] = await Promise.all([
      sql<HistoryEventRow>`select e.seq, e.type, e.occurred_at, ${historyData('e')} as data
        from trail_events e where ${key}
        order by e.seq limit ${page.limit} offset ${page.offset}`.execute(db),
      countEvents(db, key),
    ]);
    return { events: events.rows, total };
  },
};
