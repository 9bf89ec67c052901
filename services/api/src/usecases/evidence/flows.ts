/** Flows: create or update (with a template or the legacy list), rename (spec rule 1), archive, present. */
import type { Flow } from '../../../../shared/contract/flows.js';
import { EMPTY_TEMPLATE_YAML, parseFlowTemplate, type FlowTemplate } from '../../domain/flow-template.js';
import { BadRequestError, NotFoundError, ValidationError } from '../../errors.js';
import { newId } from '../../ids.js';
import { epochSeconds } from '../../time.js';
import {
  flowsRepository,
  type FlowListFilter,
  type FlowRow,
  type FlowWithActivity,
} from '../../storage/repositories/flows.js';
import { toJson } from '../../storage/repositories/json.js';
import type { OrgScope } from '../scope/org-scope.js';
import { flowHtmlUrl, type LinkBase } from '../scope/links.js';

/** The message of a missing flow, as the CLI shows it. */
export function flowNotFound(name: string, orgName: string): NotFoundError {
  return new NotFoundError(`Flow named '${name}' does not exist for organization '${orgName}'`);
}

/** The flow by its name or an old name it still answers to; 404 otherwise. */
export async function resolveFlow(scope: Pick<OrgScope, 'db' | 'org'>, name: string): Promise<FlowRow> {
  const flow = await flowsRepository.findByName(scope.db, scope.org.id, name);
  if (!flow) {
    throw flowNotFound(name, scope.org.name);
  }
  return flow;
}

/** Parses an uploaded template or fails with the line and reason under `field`. */
export function templateFromYaml(yamlText: string, field: string): FlowTemplate {
  const parsed = parseFlowTemplate(yamlText);
  if (!parsed.ok) {
    throw new ValidationError({ [field]: parsed.problems.join('; ') }, 'Invalid flow template');
  }
  return parsed.template;
}

/** The flow, created (without a template) when it does not exist yet: attesting creates it. */
export async function ensureFlow(scope: OrgScope, name: string): Promise<FlowRow> {
  const existing = await flowsRepository.findByName(scope.db, scope.org.id, name);
  if (existing) {
    return existing;
  }
  const inserted = await flowsRepository.insert(scope.db, newFlowRow(scope, { name, description: '' }));
  return inserted ?? (await resolveFlow(scope, name));
}

/**
 * The template text a flow keeps: the uploaded YAML; else, for a flow that has no legacy list
 * either, the minimal template (`version: 1`, nothing expected), which clients such as the
 * Terraform provider read back as the flow's template. The parsed template stays null then, so
 * evaluation is exactly that of a flow without a template (semantics.md section 4).
 */
function storedYaml(yaml: string | null, legacy: string[] | null): string | null {
  if (yaml !== null) {
    return yaml;
  }
  return legacy ? null : EMPTY_TEMPLATE_YAML;
}

function newFlowRow(
  scope: OrgScope,
  f: {
    name: string;
    description: string;
    visibility?: string | undefined;
    yaml?: string | null;
    template?: FlowTemplate | null;
    legacy?: string[] | null;
  },
) {
  return {
    org_id: scope.org.id,
    id: newId(),
    name: f.name,
    description: f.description,
    visibility: f.visibility ?? 'private',
    template_yaml: storedYaml(f.yaml ?? null, f.legacy ?? null),
    template: toJson(f.template ?? null),
    legacy_template: toJson(f.legacy ?? null),
    tags: '{}',
    created_by: scope.actor,
    created_at: scope.now,
    last_modified_at: scope.now,
  };
}

/**
 * Creates or updates a flow by its current name. A name that is only the old name of a renamed
 * flow is free: creating a flow with it takes it, and the renamed flow answers only under its
 * new name from then on (spec rule 1). Returns whether it was created (201) or updated (200).
 */
export async function upsertFlow(
  scope: OrgScope,
  f: {
    name: string;
    description: string;
    visibility?: string | undefined;
    yaml: string | null;
    template: FlowTemplate | null;
    legacy: string[] | null;
  },
): Promise<{ flow: FlowRow; created: boolean }> {
  const existing = await flowsRepository.findByOwnName(scope.db, scope.org.id, f.name);
  if (!existing) {
    const inserted = await flowsRepository.insert(scope.db, newFlowRow(scope, f));
    if (inserted) {
      await flowsRepository.releaseAlias(scope.db, scope.org.id, f.name);
      return { flow: inserted, created: true };
    }
  }
  // Not inserted: a concurrent create of the same name committed first; update that flow.
  const target = existing ?? (await resolveFlow(scope, f.name));
  const flow = await flowsRepository.update(scope.db, scope.org.id, target.id, {
    description: f.description,
    ...(f.visibility ? { visibility: f.visibility } : {}),
    template_yaml: storedYaml(f.yaml, f.legacy),
    template: toJson(f.template),
    legacy_template: toJson(f.legacy),
    last_modified_at: scope.now,
  });
  return { flow, created: false };
}

/** Renames a flow; the old name keeps answering until another flow takes it (spec rule 1). */
export async function renameFlow(scope: OrgScope, oldName: string, newName: string): Promise<void> {
  const flow = await resolveFlow(scope, oldName);
  if (flow.name === newName) {
    return;
  }
  const holder = await flowsRepository.findByName(scope.db, scope.org.id, newName);
  if (holder && holder.name === newName) {
    throw new BadRequestError(`Flow named '${newName}' already exists for organization '${scope.org.name}'`, {
      'body.new_name': 'is the name of another flow',
    });
  }
  await flowsRepository.rename(scope.db, scope.org.id, flow, newName, scope.now);
}

/**
 * The template as `GET /flows` shows it: the YAML, or the legacy names joined by spaces; a flow
 * stored before the minimal template was kept shows that template too.
 */
function templateText(row: FlowRow): string {
  if (row.template_yaml !== null) {
    return row.template_yaml;
  }
  if (row.legacy_template) {
    return row.legacy_template.join(' ');
  }
  return EMPTY_TEMPLATE_YAML;
}

/** The wire form of a flow. */
export function presentFlow(row: FlowWithActivity, scope: LinkBase): Flow {
  return {
    name: row.name,
    description: row.description,
    visibility: row.visibility,
    org: scope.org.name,
    template: templateText(row),
    repo_url: null,
    tags: row.tags,
    archived: row.archived,
    created_at: epochSeconds(row.created_at),
    last_modified_at: epochSeconds(row.last_modified_at),
    latest_activity_at: row.latest_activity_at ? epochSeconds(row.latest_activity_at) : null,
    latest_state: row.latest_state,
    last_deployment_at: null,
    html_url: flowHtmlUrl(scope, row.name),
  };
}

/** The organization's flows as the API shows them, and how many match (a page when given). */
export async function listFlows(
  scope: OrgScope,
  filter: FlowListFilter,
  page?: { limit: number; offset: number },
): Promise<{ flows: Flow[]; total: number }> {
  const { rows, total } = await flowsRepository.list(scope.db, scope.org.id, filter, page);
  return { flows: rows.map((r) => presentFlow(r, scope)), total };
}

/** A flow by its name or an old name, as the API shows it; 404 otherwise. */
export async function readFlow(scope: OrgScope, name: string): Promise<Flow> {
  const flow = await resolveFlow(scope, name);
  return presentFlow((await flowsRepository.findWithActivity(scope.db, scope.org.id, flow.id))!, scope);
}

/** Archives a flow found by its name or an old name; 404 otherwise. */
export async function archiveFlow(scope: OrgScope, name: string): Promise<void> {
  const flow = await resolveFlow(scope, name);
  await flowsRepository.update(scope.db, scope.org.id, flow.id, {
    archived: true,
    last_modified_at: scope.now,
  });
}
