/** Repos from `repo_info` (semantics.md section 8), and their presentation. */
import type { z } from 'zod';
import type { RepoInfoInput } from '../../../shared/contract/evidence-common.js';
import type { Repo } from '../../../shared/contract/repos.js';
import { epochSeconds, newId } from '../ids.js';
import type { Db } from '../storage/database.js';
import { reposRepository, type RepoRow } from '../storage/repositories/repos.js';

/** Records the repo a trail, artifact or attestation names; returns its id (null without one). */
export async function captureRepo(
  db: Db,
  orgId: string,
  info: z.infer<typeof RepoInfoInput> | null | undefined,
  now: Date,
): Promise<string | null> {
  if (!info) return null;
  return reposRepository.upsert(
    db,
    orgId,
    {
      id: newId(),
      name: info.name,
      provider: info.provider ?? '',
      url: info.url,
      external_id: info.id ?? null,
      description: info.description ?? null,
      vcs_instance: info.vcs_instance ?? null,
      namespace_path: info.namespace_path ?? null,
      additional_info: info.additional_info ?? null,
    },
    now,
  );
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
