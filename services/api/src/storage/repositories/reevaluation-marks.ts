/**
 * Marks of environments to re-evaluate (`reevaluation_marks`): written where a change may move a
 * verdict, claimed by the re-evaluation worker with SKIP LOCKED so replicas share the work.
 */
import type { Db } from '../database.js';

export const reevaluationMarksRepository = {
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
    if (marks.length === 0) {
      return;
    }
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
    if (ids.length === 0) {
      return;
    }
    await db
      .deleteFrom('reevaluation_marks')
      .where('org_id', '=', orgId)
      .where('id', 'in', [...ids])
      .execute();
  },
};
