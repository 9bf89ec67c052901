/** Trails: begin (create or update), auto-create on first evidence, present. */
import { logIndexes } from '../log/log.js';
import type { z } from 'zod';
import type { CreateTrail, Trail, TrailListItem } from '../../../../shared/contract/trails.js';
import { evaluateTrail } from '../../domain/compliance.js';
import { EMPTY_TEMPLATE, type FlowTemplate } from '../../domain/flow-template.js';
import { NotFoundError } from '../../errors.js';
import { newId } from '../../ids.js';
import { epochSeconds } from '../../time.js';
import { flowsRepository, type FlowRow } from '../../storage/repositories/flows.js';
import { toJson } from '../../storage/repositories/json.js';
import { trailEventsRepository, type TrailEventRow } from '../../storage/repositories/trail-events.js';
import { trailsRepository, type TrailListFilter, type TrailRow } from '../../storage/repositories/trails.js';
import { storedCompliance, trailTemplate } from '../../domain/trail-evaluation.js';
import { reevaluateTrail } from './evaluation.js';
import type { OrgScope } from '../scope/org-scope.js';
import { trailHtmlUrl, type LinkBase } from '../scope/links.js';
import { flowNotFound, resolveFlow } from './flows.js';
import { captureRepo } from './repos.js';

/** The message of a missing trail. */
export function trailNotFound(trail: string, flow: string, orgName: string): NotFoundError {
  return new NotFoundError(
    `Trail named '${trail}' does not exist in flow '${flow}' for organization '${orgName}'`,
  );
}

function newTrailRow(
  scope: OrgScope,
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
    evaluatedAt: epochSeconds(scope.now),
  });
  return {
    org_id: scope.org.id,
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
    created_by: scope.actor,
    created_at: scope.now,
    last_modified_at: scope.now,
    compliance: JSON.stringify(storedCompliance(empty)),
    compliance_state: empty.status,
    evaluated_at: scope.now,
  };
}

/**
 * Begins a trail, or updates the one of that name (201 vs 200). Runs in the caller's transaction;
 * concurrent begins of one name make one trail (the others update it).
 */
export async function beginTrail(
  scope: OrgScope,
  flow: FlowRow,
  input: z.infer<typeof CreateTrail>,
  template: { yaml: string; template: FlowTemplate } | null,
): Promise<{ trail: TrailRow; created: boolean }> {
  const repoId = await captureRepo(scope.db, scope.org.id, input.repo_info, scope.now);
  const inserted = await trailsRepository.insert(scope.db, newTrailRow(scope, flow, input, template, repoId));
  if (inserted) {
    await trailEventsRepository.insert(scope.db, [
      {
        org_id: scope.org.id,
        trail_id: inserted.id,
        type: 'trail_reported',
        fingerprint: null,
        occurred_at: scope.now,
        data: JSON.stringify({ git_commit_info: input.git_commit_info ?? null, reported_by: scope.actor }),
      },
    ]);
    await reevaluateTrail(scope.db, { orgId: scope.org.id, flow, trail: inserted, now: scope.now });
    await scope.events.publish(scope.db, [
      {
        type: 'trail.started',
        orgId: scope.org.id,
        flowName: flow.name,
        trailName: inserted.name,
        at: scope.now,
      },
    ]);
    return { trail: inserted, created: true };
  }
  const existing = await trailsRepository.findForUpdate(scope.db, scope.org.id, flow.id, input.name);
  if (!existing) {
    throw trailNotFound(input.name, flow.name, scope.org.name);
  }
  const patch = {
    description: input.description ?? existing.description,
    ...(input.git_commit_info !== undefined ? { git_commit_info: toJson(input.git_commit_info) } : {}),
    ...(input.repo_info !== undefined ? { repo_info: toJson(input.repo_info), repo_id: repoId } : {}),
    ...(input.origin_url !== undefined ? { origin_url: input.origin_url } : {}),
    ...(input.external_urls !== undefined ? { external_urls: toJson(input.external_urls) } : {}),
    ...(input.user_data !== undefined ? { user_data: toJson(input.user_data) } : {}),
    ...(template ? { template_yaml: template.yaml, template: toJson(template.template) } : {}),
    last_modified_at: scope.now,
  };
  await trailsRepository.update(scope.db, scope.org.id, existing.id, patch);
  await trailEventsRepository.insert(scope.db, [
    {
      org_id: scope.org.id,
      trail_id: existing.id,
      type: 'trail_updated',
      fingerprint: null,
      occurred_at: scope.now,
      data: JSON.stringify({
        changes: Object.keys(patch).filter((k) => k !== 'last_modified_at'),
        reported_by: scope.actor,
      }),
    },
  ]);
  const updated = (await trailsRepository.find(scope.db, scope.org.id, flow.id, input.name))!;
  const { changedFingerprints } = await reevaluateTrail(scope.db, {
    orgId: scope.org.id,
    flow,
    trail: updated,
    now: scope.now,
  });
  // A new template can change the verdicts of artifacts already running somewhere.
  if (changedFingerprints.length > 0) {
    await scope.events.publish(scope.db, [
      {
        type: 'artifact.compliance-changed',
        orgId: scope.org.id,
        fingerprints: changedFingerprints,
        at: scope.now,
      },
    ]);
  }
  return { trail: updated, created: false };
}

/** The trail, locked; created (no template of its own) when evidence arrives for one that does not exist. */
export async function ensureTrail(scope: OrgScope, flow: FlowRow, name: string): Promise<TrailRow> {
  const existing = await trailsRepository.findForUpdate(scope.db, scope.org.id, flow.id, name);
  if (existing) {
    return existing;
  }
  const { trail } = await beginTrail(scope, flow, { name }, null);
  return (await trailsRepository.findForUpdate(scope.db, scope.org.id, flow.id, trail.name)) ?? trail;
}

/** A trail's event as its answer shows it. */
const trailEvent = (e: TrailEventRow) => ({
  ...e.data,
  type: e.type,
  timestamp: epochSeconds(e.occurred_at),
});

/**
 * The wire form of a trail with its event log: its first and most recent events (`trailView`),
 * or with `events: 'all'` every one of them (an audit package holds the whole log).
 */
export async function presentTrail(
  scope: OrgScope,
  flow: FlowRow,
  trail: TrailRow,
  opts: { events: 'recent' | 'all' } = { events: 'recent' },
): Promise<Trail> {
  const [view, logIndex] = await Promise.all([
    opts.events === 'all'
      ? trailEventsRepository
          .listForTrail(scope.db, scope.org.id, trail.id)
          .then((events) => ({ events, total: events.length }))
      : trailEventsRepository.trailView(scope.db, scope.org.id, trail.id),
    logIndexes(scope.db, scope.org.id, 'trail', [trail.id]),
  ]);
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
    events: view.events.map(trailEvent),
    events_total: view.total,
    created_by: trail.created_by,
    flow: { name: flow.name, tags: flow.tags },
    external_urls: trail.external_urls,
    html_url: trailHtmlUrl(scope, flow.name, trail.name),
    log_index: logIndex(trail.id),
  };
}

/** The wire form of a trail in a listing. */
export function presentTrailItem(
  scope: LinkBase,
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
    html_url: trailHtmlUrl(scope, trail.flow_name, trail.name),
  };
}

type TrailItems = { trails: Array<z.infer<typeof TrailListItem>>; total: number };

/** One page of the trails matching `filter`, as listings show them, and how many match. */
async function trailItems(
  scope: OrgScope,
  filter: TrailListFilter,
  page: { limit: number; offset: number },
): Promise<TrailItems> {
  const { rows, total } = await trailsRepository.list(scope.db, scope.org.id, filter, page);
  return { trails: rows.map((r) => presentTrailItem(scope, r)), total };
}

/** The organization's trails, in the flow of that (current) name when given; 404 for no such flow. */
export async function listTrails(
  scope: OrgScope,
  filter: Omit<TrailListFilter, 'flowId'> & { flowName?: string | undefined },
  page: { limit: number; offset: number },
): Promise<TrailItems> {
  const { flowName, ...rest } = filter;
  let flowId: string | undefined;
  if (flowName !== undefined) {
    const flow = await flowsRepository.findByName(scope.db, scope.org.id, flowName);
    if (!flow) {
      throw flowNotFound(flowName, scope.org.name);
    }
    flowId = flow.id;
  }
  return trailItems(scope, { ...rest, flowId }, page);
}

/** The trails of a flow found by its name or an old name, newest first; 404 otherwise. */
export async function listFlowTrails(
  scope: OrgScope,
  flowName: string,
  page: { limit: number; offset: number },
): Promise<TrailItems> {
  const flow = await resolveFlow(scope, flowName);
  return trailItems(scope, { flowId: flow.id }, page);
}

/** A trail of a flow found by its name (the flow by its name or an old name); 404 otherwise. */
async function findTrail(scope: OrgScope, flowName: string, trailName: string) {
  const flow = await resolveFlow(scope, flowName);
  const trail = await trailsRepository.find(scope.db, scope.org.id, flow.id, trailName);
  if (!trail) {
    throw trailNotFound(trailName, flow.name, scope.org.name);
  }
  return { flow, trail };
}

/** A trail of a flow (found by its name or an old name) as the API shows it; 404 otherwise. */
export async function readTrail(scope: OrgScope, flowName: string, trailName: string): Promise<Trail> {
  const { flow, trail } = await findTrail(scope, flowName, trailName);
  return presentTrail(scope, flow, trail);
}

/** A page of a trail's whole event log, oldest first, with its events in all; 404 as readTrail. */
export async function trailEventsPage(
  scope: OrgScope,
  flowName: string,
  trailName: string,
  page: { limit: number; offset: number },
): Promise<{ data: Trail['events']; total: number }> {
  const { trail } = await findTrail(scope, flowName, trailName);
  const { events, total } = await trailEventsRepository.trailPage(scope.db, scope.org.id, trail.id, page);
  return { data: events.map(trailEvent), total };
}
