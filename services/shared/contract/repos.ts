/** Repos, captured from `repo_info`, and tags (reference/cli-requests.md 3.10; spec endpoint 15). */
import { z } from 'zod';
import { EpochSeconds } from './common.js';
import { Tags } from './evidence-common.js';

/** A repo. `id` is Verity's id (what `PATCH /tags/{org}/repo/{id}` takes); `repo_id` the host's. */
export const Repo = z
  .object({
    id: z.string(),
    name: z.string(),
    url: z.string(),
    provider: z.string().nullable(),
    repo_id: z.string().nullable(),
    description: z.string().nullable(),
    vcs_instance: z.string().nullable(),
    namespace_path: z.array(z.string()).nullable(),
    tags: Tags,
    created_at: EpochSeconds,
    last_modified_at: EpochSeconds,
    latest_activity: EpochSeconds,
  })
  .meta({ id: 'Repo' });

/** `GET /repos/{org}`. */
export const RepoPage = z
  .object({
    repos: z.array(Repo),
    page: z.number().int(),
    per_page: z.number().int(),
    total_pages: z.number().int(),
    total_count: z.number().int(),
    _links: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'RepoPage' });

/** Spec endpoint 15: distinct tag choices across the organization's repos. */
export const RepoTagChoices = z
  .object({
    tag_choices: z.array(z.object({ key: z.string(), value: z.string() })),
    _links: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'RepoTagChoices' });
