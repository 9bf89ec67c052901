/** The event log of each trail: what `GET /trails/...` shows as `events[]`, and artifact history. */
import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { TrailEventsTable } from '../tables/evidence.js';

export type TrailEventRow = Selectable<TrailEventsTable>;

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

  /** The events of one fingerprint in each of these trails. */
  async forArtifacts(
    db: Db,
    orgId: string,
    pairs: ReadonlyArray<{ trailId: string; fingerprint: string }>,
  ): Promise<TrailEventRow[]> {
    if (pairs.length === 0) {
      return [];
    }
    return db
      .selectFrom('trail_events')
      .selectAll()
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
