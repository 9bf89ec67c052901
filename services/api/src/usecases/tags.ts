/**
 * Tags on flows, repos, controls and environments (`PATCH /tags/{org}/{type}/{id}`). One entry
 * per target type, each with the permission it needs, so new targets plug in here.
 */
import type { Permission } from '../domain/roles.js';
import { NotFoundError } from '../errors.js';
import { controlsRepository } from '../storage/repositories/controls.js';
import { setEnvironmentTags } from '../storage/repositories/environments.js';
import { flowsRepository } from '../storage/repositories/flows.js';
import { reposRepository } from '../storage/repositories/repos.js';
import { assertControlsEnabled, getControl } from './controls.js';
import type { EvidenceContext } from './evidence-context.js';
import { resolveFlow } from './flows.js';
import type { OrgContext } from './principal.js';

export interface TagChange {
  set: Record<string, string>;
  remove: string[];
}

/** Applies a change to existing tags. */
export function changeTags(current: Record<string, string>, change: TagChange): Record<string, string> {
  const next = { ...current, ...change.set };
  for (const key of change.remove) delete next[key];
  return next;
}

export interface TagTarget {
  permission: Permission;
  apply(ctx: EvidenceContext, org: OrgContext, id: string, change: TagChange): Promise<void>;
}

const flowTarget: TagTarget = {
  permission: 'flow:write',
  async apply(ctx, _org, id, change) {
    const flow = await resolveFlow(ctx.db, ctx.orgId, ctx.orgName, id);
    await flowsRepository.update(ctx.db, ctx.orgId, flow.id, {
      tags: JSON.stringify(changeTags(flow.tags, change)),
      last_modified_at: ctx.now,
    });
  },
};

const repoTarget: TagTarget = {
  permission: 'evidence:write',
  async apply(ctx, _org, id, change) {
    const repo = await reposRepository.findById(ctx.db, ctx.orgId, id);
    if (!repo) throw new NotFoundError(`Repo '${id}' not found`);
    await reposRepository.setTags(ctx.db, ctx.orgId, repo.id, changeTags(repo.tags, change), ctx.now);
  },
};

const controlTarget: TagTarget = {
  permission: 'control:write',
  async apply(ctx, org, id, change) {
    assertControlsEnabled(org);
    const control = await getControl(ctx.db, ctx.orgId, ctx.orgName, id);
    // Tags do not make a new version of a control.
    await controlsRepository.update(ctx.db, ctx.orgId, control.id, {
      tags: JSON.stringify(changeTags(control.tags, change)),
      last_modified_at: ctx.now,
    });
  },
};

const environmentTarget: TagTarget = {
  permission: 'environment:write',
  async apply(ctx, _org, id, change) {
    if (!(await setEnvironmentTags(ctx.db, ctx.orgId, id, change.set, change.remove)))
      throw new NotFoundError(`Environment named '${id}' does not exist for organization '${ctx.orgName}'`);
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
