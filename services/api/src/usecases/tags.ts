/**
 * Tags on flows, repos, controls and environments (`PATCH /tags/{org}/{type}/{id}`). One entry
 * per target type, each with the permission it needs, so new targets plug in here.
 */
import type { Permission } from '../domain/roles.js';
import { NotFoundError } from '../errors.js';
import { controlsRepository } from '../storage/repositories/controls.js';
import { flowsRepository } from '../storage/repositories/flows.js';
import { setEnvironmentTags } from '../storage/repositories/environments.js';
import { reposRepository } from '../storage/repositories/repos.js';
import { assertControlsEnabled, getControl } from './evidence/controls.js';
import { environmentNotFound } from './runtime/environments.js';
import type { OrgScope, RequestOrg } from './scope/org-scope.js';
import { resolveFlow } from './evidence/flows.js';

export interface TagChange {
  set: Record<string, string>;
  remove: string[];
}

/** Applies a change to existing tags. */
export function changeTags(current: Record<string, string>, change: TagChange): Record<string, string> {
  const next = { ...current, ...change.set };
  for (const key of change.remove) {
    delete next[key];
  }
  return next;
}

export interface TagTarget {
  permission: Permission;
  apply(ctx: OrgScope, org: RequestOrg, id: string, change: TagChange): Promise<void>;
}

/** The row update that applies `change` to a tag map stored as JSON. */
function retagged(tags: Record<string, string>, change: TagChange, now: Date) {
  return { tags: JSON.stringify(changeTags(tags, change)), last_modified_at: now };
}

const flowTarget: TagTarget = {
  permission: 'flow:write',
  async apply(ctx, _org, id, change) {
    const flow = await resolveFlow(ctx, id);
    await flowsRepository.update(ctx.db, ctx.org.id, flow.id, retagged(flow.tags, change, ctx.now));
  },
};

const repoTarget: TagTarget = {
  permission: 'evidence:write',
  async apply(ctx, _org, id, change) {
    const repo = await reposRepository.findById(ctx.db, ctx.org.id, id);
    if (!repo) {
      throw new NotFoundError(`Repo '${id}' not found`);
    }
    await reposRepository.setTags(ctx.db, ctx.org.id, repo.id, changeTags(repo.tags, change), ctx.now);
  },
};

const controlTarget: TagTarget = {
  permission: 'control:write',
  async apply(ctx, org, id, change) {
    assertControlsEnabled(org);
    const control = await getControl(ctx, id);
    // Tags do not make a new version of a control.
    await controlsRepository.update(ctx.db, ctx.org.id, control.id, retagged(control.tags, change, ctx.now));
  },
};

const environmentTarget: TagTarget = {
  permission: 'environment:write',
  async apply(ctx, _org, id, change) {
    if (!(await setEnvironmentTags(ctx.db, ctx.org.id, id, change.set, change.remove))) {
      throw environmentNotFound({ id: ctx.org.id, name: ctx.org.name }, id);
    }
  },
};

/** Targets by the `{type}` path segment, as the CLI echoes what the user typed. */
export const TAG_TARGETS: Record<string, TagTarget> = {
  flow: flowTarget,
  flows: flowTarget,
  repo: repoTarget,
  repos: repoTarget,
  control: controlTarget,
  controls: controlTarget,
  env: environmentTarget,
  environment: environmentTarget,
  environments: environmentTarget,
};
