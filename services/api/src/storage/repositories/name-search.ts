/**
 * Names containing a text, across the organization's flows, trails, environments and artifacts:
 * each kind one query, case-insensitive, the user's wildcards taken literally, at most `limit` + 1
 * rows (the extra row only says there are more).
 */
import type { Db } from '../database.js';
import { containsPattern } from '../like-pattern.js';

export const nameSearchRepository = {
  async flows(db: Db, orgId: string, text: string, limit: number) {
    return db
      .selectFrom('flows')
      .select(['name', 'description'])
      .where('org_id', '=', orgId)
      .where('archived', '=', false)
      .where('name', 'ilike', containsPattern(text))
      .orderBy('name')
      .limit(limit + 1)
      .execute();
  },

  /** Trails, newest first. */
  async trails(db: Db, orgId: string, text: string, limit: number) {
    return db
      .selectFrom('trails as t')
      .innerJoin('flows as f', (j) => j.onRef('f.org_id', '=', 't.org_id').onRef('f.id', '=', 't.flow_id'))
      .select(['t.name', 't.compliance_state', 'f.name as flow_name'])
      .where('t.org_id', '=', orgId)
      .where('f.archived', '=', false)
      .where('t.name', 'ilike', containsPattern(text))
      .orderBy('t.created_at', 'desc')
      .orderBy('t.id')
      .limit(limit + 1)
      .execute();
  },

  async environments(db: Db, orgId: string, text: string, limit: number) {
    return db
      .selectFrom('environments')
      .select(['name', 'type'])
      .where('org_id', '=', orgId)
      .where('archived', '=', false)
      .where('name', 'ilike', containsPattern(text))
      .orderBy('name')
      .limit(limit + 1)
      .execute();
  },

  /** Artifact records by file or image name, newest first. */
  async artifacts(db: Db, orgId: string, text: string, limit: number) {
    return db
      .selectFrom('artifacts as a')
      .innerJoin('trails as t', (j) => j.onRef('t.org_id', '=', 'a.org_id').onRef('t.id', '=', 'a.trail_id'))
      .innerJoin('flows as f', (j) => j.onRef('f.org_id', '=', 'a.org_id').onRef('f.id', '=', 'a.flow_id'))
      .select([
        'a.id',
        'a.filename',
        'a.fingerprint',
        'a.state',
        't.name as trail_name',
        'f.name as flow_name',
      ])
      .where('a.org_id', '=', orgId)
      .where('f.archived', '=', false)
      .where('a.filename', 'ilike', containsPattern(text))
      .orderBy('a.created_at', 'desc')
      .orderBy('a.id')
      .limit(limit + 1)
      .execute();
  },
};
