/**
 * Controls, a beta feature (spec endpoint 13; semantics.md section 8): versioned on every change
 * of name, description or links; events created, updated, archived, unarchived.
 */
import type { z } from 'zod';
import type {
  Control,
  ControlPage,
  ControlVersion,
  CreateControl,
  UpdateControl,
} from '../../../../shared/contract/controls.js';
import { ConflictError, ForbiddenError, NotFoundError } from '../../errors.js';
import { newId } from '../../ids.js';
import { epochSeconds } from '../../time.js';
import {
  controlsRepository,
  type ControlRow,
  type ControlVersionRow,
} from '../../storage/repositories/controls.js';
import type { ControlEventRecord } from '../../storage/tables/evidence.js';
import type { OrgScope, RequestOrg } from '../scope/org-scope.js';

/** 403 unless the organization has turned beta features on (spec endpoint 13, Errors). */
export function assertControlsEnabled(org: RequestOrg): void {
  if (!org.experimentalFeaturesEnabled) {
    throw new ForbiddenError(
      `Controls are a beta feature that is not enabled for organization '${org.name}': an admin can enable it with 'kosli enable beta'`,
    );
  }
}

/** The control by identifier; 404 otherwise. */
export async function getControl(scope: OrgScope, identifier: string, lock = false): Promise<ControlRow> {
  const { db } = scope;
  const orgId = scope.org.id;
  const orgName = scope.org.name;
  const row = await controlsRepository.find(db, orgId, identifier, lock);
  if (!row) {
    throw new NotFoundError(
      `Control with identifier '${identifier}' does not exist in organization '${orgName}'`,
    );
  }
  return row;
}

const event = (ctx: OrgScope, kind: ControlEventRecord['event'], version: number): ControlEventRecord => ({
  event: kind,
  version,
  created_at: epochSeconds(ctx.now),
  created_by: ctx.actor,
});

/** Creates a control (version 1). A taken identifier is a 409 the CLI reports without retrying. */
export async function createControl(
  ctx: OrgScope,
  input: z.infer<typeof CreateControl>,
): Promise<ControlRow> {
  const row = await controlsRepository.insert(ctx.db, {
    org_id: ctx.org.id,
    id: newId(),
    identifier: input.identifier,
    tags: '{}',
    events: JSON.stringify([event(ctx, 'created', 1)]),
    created_at: ctx.now,
    last_modified_at: ctx.now,
  });
  if (!row) {
    throw new ConflictError(
      `A control with identifier '${input.identifier}' already exists in organization '${ctx.org.name}'`,
    );
  }
  await controlsRepository.insertVersion(ctx.db, {
    org_id: ctx.org.id,
    control_id: row.id,
    version: 1,
    name: input.name,
    description: input.description ?? '',
    links: JSON.stringify(input.links ?? {}),
    created_by: ctx.actor,
    created_at: ctx.now,
  });
  return row;
}

/** Applies the fields present; a new version only when name, description or links change. */
export async function updateControl(
  ctx: OrgScope,
  identifier: string,
  input: z.infer<typeof UpdateControl>,
): Promise<void> {
  const control = await getControl(ctx, identifier, true);
  const [latest] = await controlsRepository.latestVersions(ctx.db, ctx.org.id, [control.id]);
  const next = {
    name: input.name ?? latest!.name,
    description: input.description !== undefined ? (input.description ?? '') : latest!.description,
    links: input.links !== undefined ? (input.links ?? {}) : latest!.links,
  };
  if (
    next.name === latest!.name &&
    next.description === latest!.description &&
    JSON.stringify(next.links) === JSON.stringify(latest!.links)
  ) {
    return;
  }
  const version = latest!.version + 1;
  await controlsRepository.insertVersion(ctx.db, {
    org_id: ctx.org.id,
    control_id: control.id,
    version,
    name: next.name,
    description: next.description,
    links: JSON.stringify(next.links),
    created_by: ctx.actor,
    created_at: ctx.now,
  });
  await controlsRepository.update(ctx.db, ctx.org.id, control.id, {
    events: JSON.stringify([...control.events, event(ctx, 'updated', version)]),
    last_modified_at: ctx.now,
  });
}

/** Archives or unarchives; records the event (no new version). */
export async function setControlArchived(
  ctx: OrgScope,
  identifier: string,
  archived: boolean,
): Promise<void> {
  const control = await getControl(ctx, identifier, true);
  if (control.archived === archived) {
    return;
  }
  const [latest] = await controlsRepository.latestVersions(ctx.db, ctx.org.id, [control.id]);
  await controlsRepository.update(ctx.db, ctx.org.id, control.id, {
    archived,
    events: JSON.stringify([
      ...control.events,
      event(ctx, archived ? 'archived' : 'unarchived', latest!.version),
    ]),
    last_modified_at: ctx.now,
  });
}

/** A version of a control (spec: Control version). */
export function presentControlVersion(
  control: ControlRow,
  v: ControlVersionRow,
): z.infer<typeof ControlVersion> {
  return {
    identifier: control.identifier,
    version: v.version,
    name: v.name,
    created_by: v.created_by,
    description: v.description,
    links: v.links,
    created_at: epochSeconds(v.created_at),
    archived: control.archived,
  };
}

/** A control: its latest version with tags and events. */
export function presentControl(control: ControlRow, latest: ControlVersionRow): z.infer<typeof Control> {
  return {
    ...presentControlVersion(control, latest),
    created_at: epochSeconds(control.created_at),
    last_modified_at: epochSeconds(control.last_modified_at),
    tags: control.tags,
    policies_referencing: [],
    events: control.events,
  };
}

/** The wire form of controls, with one query for their latest versions. */
export async function presentControls(
  scope: OrgScope,
  controls: ControlRow[],
): Promise<Array<z.infer<typeof Control>>> {
  const { db } = scope;
  const orgId = scope.org.id;
  const latest = await controlsRepository.latestVersions(
    db,
    orgId,
    controls.map((c) => c.id),
  );
  const byId = new Map(latest.map((v) => [v.control_id, v]));
  return controls.map((c) => presentControl(c, byId.get(c.id)!));
}

/** Which controls a page lists. */
export interface ControlFilter {
  archived: boolean;
  search?: string | undefined;
  tags: Array<{ key: string; value: string | null }>;
}

/** One page of controls (page-number paging), ordered by identifier. */
export async function listControls(
  scope: OrgScope,
  filter: ControlFilter,
  page: { page: number; perPage: number; direction: 'asc' | 'desc' },
): Promise<z.infer<typeof ControlPage>> {
  const { rows, total } = await controlsRepository.list(
    scope.db,
    scope.org.id,
    filter,
    { limit: page.perPage, offset: (page.page - 1) * page.perPage },
    page.direction,
  );
  return {
    controls: await presentControls(scope, rows),
    page: page.page,
    per_page: page.perPage,
    total_pages: Math.ceil(total / page.perPage),
    total_count: total,
  };
}

/** One version of a control; NotFoundError when the control or the version does not exist. */
export async function readControlVersion(
  scope: OrgScope,
  identifier: string,
  versionNumber: number,
): Promise<z.infer<typeof ControlVersion>> {
  const { db, org } = scope;
  const control = await getControl(scope, identifier);
  const version = await controlsRepository.version(db, org.id, control.id, versionNumber);
  if (!version) {
    throw new NotFoundError(`Control '${control.identifier}' has no version ${versionNumber}`);
  }
  return presentControlVersion(control, version);
}
