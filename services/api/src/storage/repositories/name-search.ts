/**
 * Names containing a text, across the organization's flows, trails, environments and artifacts:
 * each kind one query, case-insensitive, the user's wildcards taken literally, at most `limit` + 1
 * rows (the extra row only says there are more).
 *
 * Each kind's name has a trigram index (migration 0415), so a text holding three letters or digits
 * in a row reads the rows that share its trigrams, not every row of the organization. A text
 * without such a run (`db`, `-.`) has no trigram the index could look up: it is matched against
 * the NAME_SEARCH_WINDOW newest trails and artifacts and the first NAME_SEARCH_WINDOW flows and
 * environments by name, read in index order, so it too costs a bounded number of rows.
 */
import type { Db } from '../database.js';
import { containsPattern } from '../like-pattern.js';

/** Rows of each kind a text without a trigram is matched against. */
export const NAME_SEARCH_WINDOW = 10_000;

/** Whether the trigram indexes can find `text`: it holds three letters or digits in a row. */
export function hasTrigram(text: string): boolean {
  return /[\p{L}\p{N}]{3}/u.test(text);
}

/** The queries, unexecuted (tests and benchmarks explain them). */
export const nameSearchQueries = {
  flows: (db: Db, orgId: string, text: string, limit: number) => {
    const rows = db.selectFrom('flows').where('org_id', '=', orgId).where('archived', '=', false);
    return db
      .selectFrom(
        hasTrigram(text)
          ? rows.selectAll().as('f')
          : rows.selectAll().orderBy('name').limit(NAME_SEARCH_WINDOW).as('f'),
      )
      .select(['f.name', 'f.description'])
      .where('f.name', 'ilike', containsPattern(text))
      .orderBy('f.name')
      .limit(limit + 1);
  },

  /** Trails, newest first. */
  trails: (db: Db, orgId: string, text: string, limit: number) => {
    const rows = db.selectFrom('trails').where('org_id', '=', orgId);
    return db
      .selectFrom(
        hasTrigram(text)
          ? rows.selectAll().as('t')
          : rows.selectAll().orderBy('created_at', 'desc').limit(NAME_SEARCH_WINDOW).as('t'),
      )
      .innerJoin('flows as f', (j) => j.onRef('f.org_id', '=', 't.org_id').onRef('f.id', '=', 't.flow_id'))
      .select(['t.name', 't.compliance_state', 'f.name as flow_name'])
      .where('f.archived', '=', false)
      .where('t.name', 'ilike', containsPattern(text))
      .orderBy('t.created_at', 'desc')
      .orderBy('t.id')
      .limit(limit + 1);
  },

  environments: (db: Db, orgId: string, text: string, limit: number) => {
    const rows = db.selectFrom('environments').where('org_id', '=', orgId).where('archived', '=', false);
    return db
      .selectFrom(
        hasTrigram(text)
          ? rows.selectAll().as('e')
          : rows.selectAll().orderBy('name').limit(NAME_SEARCH_WINDOW).as('e'),
      )
      .select(['e.name', 'e.type'])
      .where('e.name', 'ilike', containsPattern(text))
      .orderBy('e.name')
      .limit(limit + 1);
  },

  /** Artifact records by file or image name, newest first. */
  artifacts: (db: Db, orgId: string, text: string, limit: number) => {
    const rows = db.selectFrom('artifacts').where('org_id', '=', orgId);
    return db
      .selectFrom(
        hasTrigram(text)
          ? rows.selectAll().as('a')
          : rows.selectAll().orderBy('created_at', 'desc').limit(NAME_SEARCH_WINDOW).as('a'),
      )
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
      .where('f.archived', '=', false)
      .where('a.filename', 'ilike', containsPattern(text))
      .orderBy('a.created_at', 'desc')
      .orderBy('a.id')
      .limit(limit + 1);
  },
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
