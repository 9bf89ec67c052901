/** The event log of each trail: what `GET /trails/...` shows as `events[]`, and artifact history. */
import { sql, type Insertable, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { TrailEventsTable } from '../tables/evidence.js';

export type TrailEventRow = Selectable<TrailEventsTable>;

/**
 * What an artifact's history and runtime places read of an event (usecases/evidence/artifacts.ts
 * `historyLine`, `runtimeFromEvents`): its data without HISTORY_UNREAD_KEYS.
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

  async listForTrail(db: Db, orgId: string, trailId: string): Promise<TrailEventRow[]> {
    return db
      .selectFrom('trail_events')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('trail_id', '=', trailId)
      .orderBy('seq')
      .execute();
  },

  /** The events of one fingerprint in each of these trails, as a history reads them. */
  async forArtifacts(
    db: Db,
    orgId: string,
    pairs: ReadonlyArray<{ trailId: string; fingerprint: string }>,
  ): Promise<Array<HistoryEventRow & Pick<TrailEventRow, 'trail_id' | 'fingerprint'>>> {
    if (pairs.length === 0) {
      return [];
    }
    return db
      .selectFrom('trail_events as e')
      .select(['trail_id', 'fingerprint', 'seq', 'type', 'occurred_at', historyData('e').as('data')])
      .where('org_id', '=', orgId)
      .where((eb) =>
        eb.or(
          pairs.map((p) => eb.and([eb('trail_id', '=', p.trailId), eb('fingerprint', '=', p.fingerprint)])),
        ),
      )
      .orderBy('seq')
      .execute();
  },
};
