/** Trails: begin (create or update), auto-create on first evidence, present. */
import type { z } from 'zod';
import type { CreateTrail, Trail, TrailListItem } from '../../../shared/contract/trails.js';
import { evaluateTrail } from '../domain/compliance.js';
import { EMPTY_TEMPLATE, type FlowTemplate } from '../domain/flow-template.js';
import { NotFoundError } from '../errors.js';
import { epochSeconds, newId } from '../ids.js';
import type { FlowRow } from '../storage/repositories/flows.js';
import { toJson } from '../storage/repositories/json.js';
import { trailEventsRepository } from '../storage/repositories/trail-events.js';
import { trailsRepository, type TrailRow } from '../storage/repositories/trails.js';
import { reevaluateTrail, storedCompliance, trailTemplate } from './evaluation.js';
import { seg, type EvidenceContext } from './evidence-context.js';
import { captureRepo } from './repos.js';

/** The message of a missing trail. */
export function trailNotFound(trail: string, flow: string, orgName: string): NotFoundError {
  return new NotFoundError(
    `Trail named '${trail}' does not exist in flow '${flow}' for organization '${orgName}'`,
  );
}

function newTrailRow(
  ctx: EvidenceContext,
  flow: FlowRow,
  input: z.infer<typeof CreateTrail>,
  template: { yaml: string; template: FlowTemplate } | null,
  repoId: string | null,
) {
  const empty = evaluateTrail({
    template: template?.template ?? trailTemplate({ template: null }, flow),
    templateId: null,
    artifacts: [],
    attestations: [],
    evaluatedAt: epochSeconds(ctx.now),
  });
  return {
    org_id: ctx.orgId,
    id: newId(),
    flow_id: flow.id,
    name: input.name,
    description: input.description ?? '',
    template_yaml: template?.yaml ?? null,
    template: toJson(template?.template ?? null),
    git_commit_info: toJson(input.git_commit_info),
    repo_info: toJson(input.repo_info),
    repo_id: repoId,
    origin_url: input.origin_url ?? null,
    external_urls: toJson(input.external_urls),
    user_data: toJson(input.user_data),
    created_by: ctx.actor,
    created_at: ctx.now,
    last_modified_at: ctx.now,
    compliance: JSON.stringify(storedCompliance(empty)),
    compliance_state: empty.status,
    evaluated_at: ctx.now,
  };
}

/**
 * Begins a trail, or updates the one of that name (201 vs 200). Runs in the caller's transaction;
 * concurrent begins of one name make one trail (the others update it).
 */
export async function beginTrail(
  ctx: EvidenceContext,
  flow: FlowRow,
  input: z.infer<typeof CreateTrail>,
  template: { yaml: string; template: FlowTemplate } | null,
): Promise<{ trail: TrailRow; created: boolean }> {
  const repoId = await captureRepo(ctx.db, ctx.orgId, input.repo_info, ctx.now);
  const inserted = await trailsRepository.insert(ctx.db, newTrailRow(ctx, flow, input, template, repoId));
  if (inserted) {
    await trailEventsRepository.insert(ctx.db, [
      {
        org_id: ctx.orgId,
        trail_id: inserted.id,
        type: 'trail_reported',
        fingerprint: null,
        occurred_at: ctx.now,
        data: JSON.stringify({ git_commit_info: input.git_commit_info ?? null, reported_by: ctx.actor }),
      },
    ]);
    await reevaluateTrail(ctx.db, { orgId: ctx.orgId, flow, trail: inserted, now: ctx.now });
    await ctx.events.publish(ctx.db, [
      { type: 'trail.started', orgId: ctx.orgId, flowName: flow.name, trailName: inserted.name, at: ctx.now },
    ]);
    return { trail: inserted, created: true };
  }
  const existing = await trailsRepository.findForUpdate(ctx.db, ctx.orgId, flow.id, input.name);
  if (!existing) throw trailNotFound(input.name, flow.name, ctx.orgName);
  const patch = {
    description: input.description ?? existing.description,
    ...(input.git_commit_info !== undefined ? { git_commit_info: toJson(input.git_commit_info) } : {}),
    ...(input.repo_info !== undefined ? { repo_info: toJson(input.repo_info), repo_id: repoId } : {}),
    ...(input.origin_url !== undefined ? { origin_url: input.origin_url } : {}),
    ...(input.external_urls !== undefined ? { external_urls: toJson(input.external_urls) } : {}),
    ...(input.user_data !== undefined ? { user_data: toJson(input.user_data) } : {}),
    ...(template ? { template_yaml: template.yaml, template: toJson(template.template) } : {}),
    last_modified_at: ctx.now,
  };
  await trailsRepository.update(ctx.db, ctx.orgId, existing.id, patch);
  await trailEventsRepository.insert(ctx.db, [
    {
      org_id: ctx.orgId,
      trail_id: existing.id,
      type: 'trail_updated',
      fingerprint: null,
      occurred_at: ctx.now,
      data: JSON.stringify({
        changes: Object.keys(patch).filter((k) => k !== 'last_modified_at'),
        reported_by: ctx.actor,
      }),
    },
  ]);
  const updated = (await trailsRepository.find(ctx.db, ctx.orgId, flow.id, input.name))!;
  const { changedFingerprints } = await reevaluateTrail(ctx.db, {
    orgId: ctx.orgId,
    flow,
    trail: updated,
    now: ctx.now,
  });
  // A new template can change the verdicts of artifacts already running somewhere.
  if (changedFingerprints.length > 0) {
    await ctx.events.publish(ctx.db, [
      {
        type: 'artifact.compliance-changed',
        orgId: ctx.orgId,
        fingerprints: changedFingerprints,
        at: ctx.now,
      },
    ]);
  }
  return { trail: updated, created: false };
}

/** The trail, locked; created (no template of its own) when evidence arrives for one that does not exist. */
export async function ensureTrail(ctx: EvidenceContext, flow: FlowRow, name: string): Promise<TrailRow> {
  const existing = await trailsRepository.findForUpdate(ctx.db, ctx.orgId, flow.id, name);
  if (existing) return existing;
  const { trail } = await beginTrail(ctx, flow, { name }, null);
  return (await trailsRepository.findForUpdate(ctx.db, ctx.orgId, flow.id, trail.name)) ?? trail;
}

/** The wire form of a trail with its event log. */
export async function presentTrail(ctx: EvidenceContext, flow: FlowRow, trail: TrailRow): Promise<Trail> {
  const events = await trailEventsRepository.listForTrail(ctx.db, ctx.orgId, trail.id);
  const template = trailTemplate(trail, flow);
  const compliance = trail.compliance as Trail['compliance_status'];
  return {
    name: trail.name,
    description: trail.description,
    git_commit_info: (trail.git_commit_info as Trail['git_commit_info']) ?? null,
    origin_url: trail.origin_url,
    user_data: trail.user_data ?? {},
    repo_ids: trail.repo_id ? [trail.repo_id] : [],
    last_modified_at: epochSeconds(trail.last_modified_at),
    created_at: epochSeconds(trail.created_at),
    compliance_status: compliance,
    template: {
      version: 1,
      trail: template === EMPTY_TEMPLATE ? { attestations: [], artifacts: [] } : template.trail,
      content: trail.template_yaml ?? flow.template_yaml,
    },
    compliance_state: trail.compliance_state,
    is_compliant: trail.compliance_state === 'COMPLIANT',
    events: events.map((e) => ({ ...e.data, type: e.type, timestamp: epochSeconds(e.occurred_at) })),
    created_by: trail.created_by,
    flow: { name: flow.name, tags: flow.tags },
    external_urls: trail.external_urls,
    html_url: trailUrl(ctx, flow.name, trail.name),
  };
}

/** The page of a trail. */
export function trailUrl(
  ctx: Pick<EvidenceContext, 'publicUrl' | 'orgName'>,
  flow: string,
  trail: string,
): string {
  return `${ctx.publicUrl}/${seg(ctx.orgName)}/flows/${seg(flow)}/trails/${seg(trail)}`;
}

/** The wire form of a trail in a listing. */
export function presentTrailItem(
  ctx: Pick<EvidenceContext, 'publicUrl' | 'orgName'>,
  trail: TrailRow & { flow_name: string },
): z.infer<typeof TrailListItem> {
  return {
    name: trail.name,
    description: trail.description,
    flow_name: trail.flow_name,
    compliance_state: trail.compliance_state,
    is_compliant: trail.compliance_state === 'COMPLIANT',
    git_commit_info: (trail.git_commit_info as Trail['git_commit_info']) ?? null,
    origin_url: trail.origin_url,
    created_at: epochSeconds(trail.created_at),
    last_modified_at: epochSeconds(trail.last_modified_at),
    html_url: trailUrl(ctx, trail.flow_name, trail.name),
  };
}
