/** Repos, created from the `repo_info` of trails, artifacts and attestations. */
import { sql, type Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { ReposTable } from '../tables/evidence.js';
import { containsPattern } from '../like-pattern.js';
import { toJson } from './json.js';
import { countRows } from './queries.js';

export type RepoRow = Selectable<ReposTable>;

export type RepoUpsert = Pick<
  RepoRow,
  | 'id'
  | 'name'
  | 'provider'
  | 'url'
  | 'external_id'
  | 'description'
  | 'vcs_instance'
  | 'namespace_path'
  | 'additional_info'
>;

/** The insert of a new repo row. */
const newRepo = (db: Db, orgId: string, repo: RepoUpsert, now: Date) =>
  db.insertInto('repos').values({
    org_id: orgId,
    ...repo,
    namespace_path: toJson(repo.namespace_path),
    additional_info: toJson(repo.additional_info),
    tags: '{}',
    created_at: now,
    last_modified_at: now,
  });

/** The organization's repos. */
const reposOf = (db: Db, orgId: string) => db.selectFrom('repos').selectAll().where('org_id', '=', orgId);

export const reposRepository = {
  /**
   * Creates the repo named in a `repo_info` unless the organization has one of that name and
   * provider; returns its id, or undefined when it had one. No row is locked then: a transaction
   * storing the same new repo meanwhile is waited for until it ends, and no longer.
   */
  async insertIfAbsent(db: Db, orgId: string, repo: RepoUpsert, now: Date): Promise<string | undefined> {
    const row = await newRepo(db, orgId, repo, now)
      .onConflict((oc) => oc.columns(['org_id', 'name', 'provider']).doNothing())
      .returning('id')
      .executeTakeFirst();
    return row?.id;
  },

  /** Creates or refreshes the repo named in a `repo_info`; returns its id. */
  async upsert(db: Db, orgId: string, repo: RepoUpsert, now: Date): Promise<string> {
    const row = await newRepo(db, orgId, repo, now)
      .onConflict((oc) =>
        oc.columns(['org_id', 'name', 'provider']).doUpdateSet((eb) => ({
          url: eb.ref('excluded.url'),
          external_id: sql<string | null>`coalesce(excluded.external_id, repos.external_id)`,
          description: sql<string | null>`coalesce(excluded.description, repos.description)`,
          vcs_instance: sql<string | null>`coalesce(excluded.vcs_instance, repos.vcs_instance)`,
          namespace_path: sql<string>`coalesce(excluded.namespace_path, repos.namespace_path)`,
          additional_info: sql<string>`coalesce(excluded.additional_info, repos.additional_info)`,
          last_modified_at: eb.ref('excluded.last_modified_at'),
        })),
      )
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  },

  async findById(db: Db, orgId: string, id: string): Promise<RepoRow | undefined> {
    return reposOf(db, orgId).where('id', '=', id).executeTakeFirst();
  },

  async findByName(db: Db, orgId: string, name: string, provider?: string): Promise<RepoRow[]> {
    let q = reposOf(db, orgId).where('name', '=', name);
    if (provider !== undefined) {
      q = q.where('provider', '=', provider);
    }
    return q.orderBy('provider').execute();
  },

  async findByIds(db: Db, orgId: string, ids: readonly string[]): Promise<RepoRow[]> {
    if (ids.length === 0) {
      return [];
    }
    return reposOf(db, orgId)
      .where('id', 'in', [...ids])
      .execute();
  },

  async setTags(db: Db, orgId: string, id: string, tags: Record<string, string>, now: Date): Promise<void> {
    await db
      .updateTable('repos')
      .set({ tags: JSON.stringify(tags), last_modified_at: now })
      .where('org_id', '=', orgId)
      .where('id', '=', id)
      .execute();
  },

  async list(
    db: Db,
    orgId: string,
    filter: {
      name?: string | undefined;
      search?: string | undefined;
      provider?: string | undefined;
      externalId?: string | undefined;
      tags: Array<{ key: string; value: string | null }>;
    },
    page: { limit: number; offset: number },
    direction: 'asc' | 'desc',
  ): Promise<{ rows: RepoRow[]; total: number }> {
    let q = db.selectFrom('repos').where('org_id', '=', orgId);
    if (filter.externalId) {
      q = q.where('external_id', '=', filter.externalId);
    } else if (filter.name) {
      q = q.where('name', '=', filter.name);
    }
    if (filter.search) {
      q = q.where('name', 'ilike', containsPattern(filter.search));
    }
    if (filter.provider) {
      q = q.where('provider', '=', filter.provider);
    }
    // The key is bound as a parameter: kysely's `->>` key() inlines it as a string literal.
    for (const tag of filter.tags) {
      q =
        tag.value === null
          ? q.where(sql<boolean>`tags ->> ${tag.key} is not null`)
          : q.where(sql<boolean>`tags ->> ${tag.key} = ${tag.value}`);
    }
    const total = await countRows(q);
    const rows = await q
      .selectAll()
      .orderBy('name', direction)
      .orderBy('provider')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
    return { rows, total };
  },

  /** Distinct tag key/value pairs over the organization's repos (spec endpoint 15). */
  async tagChoices(db: Db, orgId: string): Promise<Array<{ key: string; value: string }>> {
    const rows = await sql<{ key: string; value: string }>`
      select distinct t.key, t.value
      from repos r, jsonb_each_text(r.tags) as t(key, value)
      where r.org_id = ${orgId}
      order by t.key, t.value`.execute(db);
    return rows.rows;
  },
};
