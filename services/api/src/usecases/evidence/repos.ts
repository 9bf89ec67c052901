/** Repos from `repo_info` (semantics.md section 8), and their presentation. */
import type { z } from 'zod';
import type { RepoInfoInput } from '../../../../shared/contract/evidence-common.js';
import type { Repo, RepoPage, RepoTagChoices } from '../../../../shared/contract/repos.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { newId } from '../../ids.js';
import { epochSeconds } from '../../time.js';
import type { Db } from '../../storage/database.js';
import { reposRepository, type RepoRow } from '../../storage/repositories/repos.js';
import { apiUrl } from '../scope/links.js';
import { cachedView, viewKey, type ViewCache } from '../scope/view-cache.js';
import type { OrgScope } from '../scope/org-scope.js';

/** Records the repo a trail, artifact or attestation names; returns its id (null without one). */
export async function captureRepo(
  db: Db,
  orgId: string,
  info: z.infer<typeof RepoInfoInput> | null | undefined,
  now: Date,
): Promise<string | null> {
  if (!info) {
    return null;
  }
  // The same repo_info as stored changes nothing: no write, so no lock on the repo's row, which
  // every attestation from that repository would otherwise wait for until its transaction ends.
  const known = await unchangedRepo(db, orgId, info);
  if (known) {
    return known;
  }
  const repo = {
    id: newId(),
    name: info.name,
    provider: info.provider ?? '',
    url: info.url,
    external_id: info.id ?? null,
    description: info.description ?? null,
    vcs_instance: info.vcs_instance ?? null,
    namespace_path: info.namespace_path ?? null,
    additional_info: info.additional_info ?? null,
  };
  // A new repo, as the first CI runs of a repository name it all at once: each waits for the one
  // that stores it, then reads it. An upsert would lock the row in each transaction in turn, and
  // each would wait for every one before it (64 runs: up to 580 ms for the last).
  const inserted = await reposRepository.insertIfAbsent(db, orgId, repo, now);
  if (inserted) {
    return inserted;
  }
  return (await unchangedRepo(db, orgId, info)) ?? reposRepository.upsert(db, orgId, repo, now);
}

/**
 * The id of the stored repo this `repo_info` names when storing it would change nothing (an
 * upsert keeps stored values where the info gives none), else undefined.
 */
export async function unchangedRepo(
  db: Db,
  orgId: string,
  info: z.infer<typeof RepoInfoInput>,
): Promise<string | undefined> {
  const [row] = await reposRepository.findByName(db, orgId, info.name, info.provider ?? '');
  if (!row || row.url !== info.url) {
    return undefined;
  }
  const same = (given: unknown, stored: unknown) =>
    given === undefined || given === null || JSON.stringify(given) === JSON.stringify(stored);
  const unchanged =
    same(info.id, row.external_id) &&
    same(info.description, row.description) &&
    same(info.vcs_instance, row.vcs_instance) &&
    same(info.namespace_path, row.namespace_path) &&
    same(info.additional_info, row.additional_info);
  return unchanged ? row.id : undefined;
}

/**
 * `unchangedRepo`, remembered per organization by the whole `repo_info` as given: a hit means the
 * repo held exactly this info when the organization's catalog epoch was last moved, so nothing
 * to write. Any change to a repo (here or on another replica) moves the epoch (migration 0371),
 * and an info that differs in any field is another key: it is read and, if it changes the repo,
 * written.
 */
export function knownRepo(
  db: Db,
  cache: ViewCache,
  orgId: string,
  info: z.infer<typeof RepoInfoInput>,
): Promise<string | undefined> {
  const given = [
    info.name,
    info.provider ?? '',
    info.url,
    info.id,
    info.description,
    info.vcs_instance,
    info.namespace_path,
    info.additional_info,
  ];
  return cachedView(cache, orgId, viewKey('repo', given), () => unchangedRepo(db, orgId, info));
}

/** The wire form of a repo. */
export function presentRepo(row: RepoRow): z.infer<typeof Repo> {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    provider: row.provider === '' ? null : row.provider,
    repo_id: row.external_id,
    description: row.description,
    vcs_instance: row.vcs_instance,
    namespace_path: row.namespace_path,
    tags: row.tags,
    created_at: epochSeconds(row.created_at),
    last_modified_at: epochSeconds(row.last_modified_at),
    latest_activity: epochSeconds(row.last_modified_at),
  };
}

/** Which repos a page lists. */
export interface RepoFilter {
  name?: string | undefined;
  search?: string | undefined;
  provider?: string | undefined;
  externalId?: string | undefined;
  tags: Array<{ key: string; value: string | null }>;
}

/** One page of the organization's repos (page-number paging), with its `self` link. */
export async function listRepos(
  base: OrgScope,
  filter: RepoFilter,
  page: { page: number; perPage: number; direction: 'asc' | 'desc' },
): Promise<z.infer<typeof RepoPage>> {
  if (filter.name !== undefined && filter.search !== undefined) {
    throw new BadRequestError('Give either name or search, not both', {
      'query.search': 'conflicts with name',
    });
  }
  const { rows, total } = await reposRepository.list(
    base.db,
    base.org.id,
    filter,
    { limit: page.perPage, offset: (page.page - 1) * page.perPage },
    page.direction,
  );
  const self = new URLSearchParams({ page: String(page.page), per_page: String(page.perPage) });
  return {
    repos: rows.map(presentRepo),
    page: page.page,
    per_page: page.perPage,
    total_pages: Math.ceil(total / page.perPage),
    total_count: total,
    _links: { self: { href: apiUrl(base, 'repos', self) } },
  };
}

/** The distinct tag key/value pairs of the organization's repos, with their `self` link. */
export async function repoTagChoices(base: OrgScope): Promise<z.infer<typeof RepoTagChoices>> {
  return {
    tag_choices: await reposRepository.tagChoices(base.db, base.org.id),
    _links: { self: { href: apiUrl(base, 'repos', 'tags') } },
  };
}

/** A repo by its id, or by name (and provider when the name is ambiguous). */
export async function findRepo(
  scope: OrgScope,
  by: { id?: string | undefined; name: string; provider?: string | undefined },
): Promise<z.infer<typeof Repo>> {
  const { db } = scope;
  const orgId = scope.org.id;
  if (by.id) {
    const byId = await reposRepository.findById(db, orgId, by.id);
    if (!byId) {
      throw new NotFoundError(`Repo '${by.id}' not found`);
    }
    return presentRepo(byId);
  }
  const rows = await reposRepository.findByName(db, orgId, by.name, by.provider);
  if (rows.length === 0) {
    throw new NotFoundError(`Repo '${by.name}' not found`);
  }
  if (rows.length > 1) {
    throw new BadRequestError(
      `Repo '${by.name}' exists for several providers (${rows.map((r) => r.provider || '(none)').join(', ')}): give --provider`,
      { 'query.provider': 'required when the name is ambiguous' },
    );
  }
  return presentRepo(rows[0]!);
}
