/**
 * Environments as the interface shows them (semantics.md section 5): with their attached policy
 * names, logical members and the number of artifacts running in their latest snapshot.
 */
import type { Environment } from '../../../../shared/contract/environments.js';
import { epochSeconds } from '../../time.js';
import {
  environmentsRepository,
  type EnvironmentListFilter,
  type EnvironmentRow,
} from '../../storage/repositories/environments.js';
import { snapshotsRepository } from '../../storage/repositories/snapshots.js';
import type { OrgScope } from '../scope/org-scope.js';

/** Environments as the interface shows them, with attached policy names and logical members. */
export async function presentEnvironments(
  scope: OrgScope,
  rows: readonly EnvironmentRow[],
): Promise<Environment[]> {
  const { db, org } = scope;
  const ids = rows.map((r) => r.id);
  const policies = await environmentsRepository.policyNamesOf(db, org.id, ids);
  const members = await environmentsRepository.membersOf(
    db,
    org.id,
    rows.filter((r) => r.type === 'logical').map((r) => r.id),
  );
  const running = await snapshotsRepository.artifactCounts(
    db,
    org.id,
    rows.filter((r) => r.latest_snapshot > 0).map((r) => ({ envId: r.id, index: r.latest_snapshot })),
  );
  return rows.map((r) => ({
    org: org.name,
    name: r.name,
    type: r.type,
    description: r.description,
    last_modified_at: epochSeconds(r.last_modified_at),
    last_reported_at: r.last_reported_at ? epochSeconds(r.last_reported_at) : null,
    last_changed_at: r.last_changed_at ? epochSeconds(r.last_changed_at) : null,
    state: r.compliant,
    include_scaling: false,
    require_provenance: r.require_provenance,
    archived: r.archived,
    tags: r.tags,
    policies: policies.get(r.id) ?? [],
    included_environments: r.type === 'logical' ? (members.get(r.id) ?? []) : null,
    latest_snapshot_index: r.latest_snapshot > 0 ? r.latest_snapshot : null,
    running_artifacts: running.get(r.id) ?? 0,
  }));
}

/** The organization's environments matching `filter`, as the interface shows them, and how many match. */
export async function listEnvironments(
  scope: OrgScope,
  filter: EnvironmentListFilter,
): Promise<{ environments: Environment[]; total: number }> {
  const { db, org } = scope;
  const { rows, total } = await environmentsRepository.list(db, org.id, filter);
  return { environments: await presentEnvironments(scope, rows), total };
}
