/**
 * Names containing a text, across the organization's flows, trails, environments and artifacts:
 * each kind one query, case-insensitive, the user's wildcards taken literally, at most `limit` + 1
 * rows (the extra row only says there are more).
 *
 * Each kind's name has a trigram index (migration 0415), so a text of three characters or more
 * reads the rows that hold its trigrams, not every row of the organization. A two-character
 * text has no trigram: the newest-first kinds (trails, artifacts) then walk the organization's
 * rows by creation time and stop at `limit` + 1 matches.
 */
import type { Db } from '../database.js';
import { containsPattern } from '../like-pattern.js';

/** The queries, unexecuted (tests and benchmarks explain them). */
export const nameSearchQueries = {
  flows: (db: Db, orgId: string, text: string, limit: number) =>
    db
      .selectFrom('flows')
      .select(['name', 'description'])
      .where('org_id', '=', orgId)
      .where('archived', '=', false)
      .where('name', 'ilike', containsPattern(text))
      .orderBy('name')
      .limit(limit + 1),

  /** Trails, newest first. */
  trails: (db: Db, orgId: string, text: string, limit: number) =>
    db
      .selectFrom('trails as t')
      .innerJoin('flows as f', (j) => j.onRef('f.org_id', '=', 't.org_id').onRef('f.id', '=', 't.flow_id'))
      .select(['t.name', 't.compliance_state', 'f.name as flow_name'])
      .where('t.org_id', '=', orgId)
      .where('f.archived', '=', false)
      .where('t.name', 'ilike', containsPattern(text))
      .orderBy('t.created_at', 'desc')
      .orderBy('t.id')
      .limit(limit + 1),

  environments: (db: Db, orgId: string, text: string, limit: number) =>
    db
      .selectFrom('environments')
      .select(['name', 'type'])
      .where('org_id', '=', orgId)
      .where('archived', '=', false)
      .where('name', 'ilike', containsPattern(text))
      .orderBy('name')
      .limit(limit + 1),

  /** Artifact records by file or image name, newest first. */
  artifacts: (db: Db, orgId: string, text: string, limit: number) =>
    db
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
      .limit(limit + 1),
};

export const nameSearchRepository = {
  flows: (db: Db, orgId: string, text: string, limit: number) =>
    nameSearchQueries.flows(db, orgId, text, limit).execute(),
  trails: (db: Db, orgId: string, text: string, limit: number) =>
    nameSearchQueries.trails(db, orgId, text, limit).execute(),
  environments: (db: Db, orgId: string, text: string, limit: number) =>
    nameSearchQueries.environments(db, orgId, text, limit).execute(),
  artifacts: (db: Db, orgId: string, text: string, limit: number) =>
    nameSearchQueries.artifacts(db, orgId, text, limit).execute(),
};
