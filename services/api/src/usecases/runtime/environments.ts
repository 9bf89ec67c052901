/**
 * Environments: create or update, patch, rename, archive, logical membership, attached policies
 * and allowlists (semantics.md sections 5, 6 and 8). Changes to policies and allowlists
 * re-evaluate the environment in the same transaction, which may make a snapshot.
 */
import type { EnvironmentPut } from '../../../../shared/contract/environments.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../errors.js';
import { newId } from '../../ids.js';
import { canChangeEnvironment, roleAllows, type EnvironmentChange, type Role } from '../../domain/roles.js';
import type { Db } from '../../storage/database.js';
import { actionsRepository } from '../../storage/repositories/actions.js';
import { environmentsRepository, type EnvironmentRow } from '../../storage/repositories/environments.js';
import { policiesRepository } from '../../storage/repositories/policies.js';
import { inTransaction, type OrgRef, type OrgScope } from '../scope/org-scope.js';
import { reevaluateLocked } from './report-ingest.js';
import { announce, type ReportOutcome } from './snapshot-write.js';

/** The 404 every environment route answers for a missing environment (the CLI relies on it). */
export function environmentNotFound(org: OrgRef, name: string): NotFoundError {
  return new NotFoundError(`Environment named '${name}' does not exist for organization '${org.name}'`);
}

export async function getEnvironment(scope: OrgScope, name: string): Promise<EnvironmentRow> {
  const { db, org } = scope;
  const env = await environmentsRepository.findByName(db, org.id, name);
  if (!env) {
    throw environmentNotFound(org, name);
  }
  return env;
}

/**
 * The environment `GET /environments/{org}/{env}` shows. An archived one answers 404 saying it has
 * been archived, as Kosli does: the Terraform provider then drops it from its state (or retries
 * its read after a create), and `kosli snapshot --auto-environment` re-creates it, which
 * un-archives it with a member's key (a snapshotter's is refused: archiving is a member's
 * decision); a report to an archived environment is refused.
 */
export async function readEnvironment(scope: OrgScope, name: string): Promise<EnvironmentRow> {
  const env = await getEnvironment(scope, name);
  if (env.archived) {
    throw new NotFoundError(
      `Environment named '${name}' has been archived for organization '${scope.org.name}'`,
    );
  }
  return env;
}

/** The environment's row, locked for this transaction; 404 when it does not exist. */
export async function lockEnvironment(scope: OrgScope, name: string): Promise<EnvironmentRow> {
  const { db, org } = scope;
  const env = await environmentsRepository.lockByName(db, org.id, name);
  if (!env) {
    throw environmentNotFound(org, name);
  }
  return env;
}

async function resolvePolicies(db: Db, org: OrgRef, names: readonly string[], field: string) {
  const found = await policiesRepository.findByNames(db, org.id, names);
  const missing = names.filter((n) => !found.some((p) => p.name === n));
  if (missing.length > 0) {
    throw new BadRequestError(`Policy '${missing[0]}' does not exist in organization '${org.name}'`, {
      [field]: `unknown policies: ${missing.join(', ')}`,
    });
  }
  return found;
}

async function resolveMembers(
  db: Db,
  org: OrgRef,
  names: readonly string[],
  field: string,
): Promise<string[]> {
  const found = await environmentsRepository.findByNames(db, org.id, names);
  for (const name of names) {
    const env = found.find((e) => e.name === name);
    if (!env) {
      throw new BadRequestError(`Environment named '${name}' does not exist for organization '${org.name}'`, {
        [field]: `unknown environment '${name}'`,
      });
    }
    if (env.type === 'logical') {
      throw new BadRequestError(
        `Environment '${name}' is logical; a logical environment groups physical ones`,
        {
          [field]: `'${name}' is logical`,
        },
      );
    }
  }
  return found.map((e) => e.id);
}

/** Replaces the attached policies; re-evaluates when they changed. */
async function setPolicies(
  scope: OrgScope,
  env: EnvironmentRow,
  names: readonly string[],
  field: string,
): Promise<ReportOutcome | null> {
  const { db, org, now } = scope;
  const wanted = await resolvePolicies(db, org, names, field);
  const current = (await environmentsRepository.policyNamesOf(db, org.id, [env.id])).get(env.id) ?? [];
  const currentRows = await policiesRepository.findByNames(db, org.id, current);
  const attached = await environmentsRepository.attachPolicies(
    db,
    org.id,
    env.id,
    wanted.map((p) => p.id),
    now,
  );
  const detached = await environmentsRepository.detachPolicies(
    db,
    org.id,
    env.id,
    currentRows.filter((p) => !wanted.some((w) => w.id === p.id)).map((p) => p.id),
  );
  if (attached + detached === 0) {
    return null;
  }
  return reevaluateLocked(scope, env, 'policies');
}

const sameSet = (a: readonly string[], b: readonly string[]): boolean => {
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...left].every((x) => right.has(x));
};

/** The fields a `PUT /environments/{org}` would change on an existing environment (none: empty). */
async function changesOf(
  db: Db,
  org: OrgRef,
  env: EnvironmentRow,
  body: EnvironmentPut,
): Promise<EnvironmentChange[]> {
  const changes: EnvironmentChange[] = [];
  if (env.type !== body.type) {
    changes.push('type');
  }
  if (env.description !== body.description) {
    changes.push('description');
  }
  if (body.require_provenance !== undefined && body.require_provenance !== env.require_provenance) {
    changes.push('require_provenance');
  }
  // A PUT un-archives.
  if (env.archived) {
    changes.push('archived');
  }
  if (body.type === 'logical' && body.included_environments) {
    const members = (await environmentsRepository.membersOf(db, org.id, [env.id])).get(env.id) ?? [];
    if (!sameSet(body.included_environments, members)) {
      changes.push('included_environments');
    }
  }
  if (body.policies) {
    const attached = (await environmentsRepository.policyNamesOf(db, org.id, [env.id])).get(env.id) ?? [];
    if (!sameSet(body.policies, attached)) {
      changes.push('policies');
    }
  }
  return changes;
}

/** `PUT /environments/{org}`: creates, or updates description and flags; returns whether it was created. */
export async function putEnvironment(scope: OrgScope, body: EnvironmentPut, role: Role): Promise<boolean> {
  const { created, outcome } = await putEnvironmentLocked(scope, body, role);
  announce(scope, outcome);
  return created;
}

async function putEnvironmentLocked(
  scope: OrgScope,
  body: EnvironmentPut,
  role: Role,
): Promise<{ created: boolean; outcome: ReportOutcome | null }> {
  const { org, now } = scope;
  if (body.policies && body.policies.length > 0 && !canChangeEnvironment(role, ['policies'])) {
    throw new ForbiddenError('Attaching policies needs the environment:write permission (Member or Admin)');
  }
  if (body.included_environments && body.included_environments.length > 0 && body.type !== 'logical') {
    throw new BadRequestError('Only a logical environment includes other environments', {
      'body.included_environments': 'allowed only with type logical',
    });
  }
  return scope.db.transaction().execute(async (tx) => {
    let env = await environmentsRepository.lockByName(tx, org.id, body.name);
    let created = false;
    if (!env) {
      const inserted = await environmentsRepository.insert(tx, {
        org_id: org.id,
        id: newId(),
        name: body.name,
        type: body.type,
        description: body.description,
        require_provenance: body.require_provenance ?? false,
        created_by: scope.actor,
        created_at: now,
        last_modified_at: now,
        last_reported_at: null,
        last_changed_at: null,
        compliant: null,
        last_report_hash: null,
        last_report_raw_hash: null,
      });
      // A concurrent create of the same name: ON CONFLICT DO NOTHING returns nothing, and
      // this transaction cannot see the other's row yet; 409 makes the client retry as an update.
      if (!inserted) {
        throw new ConflictError();
      }
      env = inserted;
      created = true;
    } else {
      if (!roleAllows(role, 'environment:write')) {
        // What the PUT would change matters only to a role that may not change everything.
        const changes = await changesOf(tx, org, env, body);
        if (!canChangeEnvironment(role, changes)) {
          throw new ForbiddenError(
            `Environment '${env.name}' exists; changing its ${changes.join(', ')} needs the environment:write permission (Member or Admin)`,
          );
        }
        return { created: false, outcome: null };
      }
      if (env.type !== body.type) {
        throw new BadRequestError(
          `Environment '${body.name}' is of type ${env.type}; its type cannot change`,
          {
            'body.type': `must be ${env.type}`,
          },
        );
      }
      await environmentsRepository.update(tx, org.id, env.id, {
        description: body.description,
        ...(body.require_provenance !== undefined ? { require_provenance: body.require_provenance } : {}),
        archived: false,
        last_modified_at: now,
      });
    }
    if (body.type === 'logical' && body.included_environments) {
      const ids = await resolveMembers(tx, org, body.included_environments, 'body.included_environments');
      await environmentsRepository.setMembers(tx, org.id, env.id, ids);
    }
    let outcome: ReportOutcome | null = null;
    if (body.policies) {
      outcome = await setPolicies(inTransaction(scope, tx), env, body.policies, 'body.policies');
    }
    return { created, outcome };
  });
}

/** `PATCH /environments/{org}/{env}`: only the fields present change. */
export async function patchEnvironment(
  scope: OrgScope,
  name: string,
  patch: { description?: string; included_environments?: string[] | null; policies?: string[] | null },
): Promise<void> {
  const { org, now } = scope;
  const outcome = await scope.db.transaction().execute(async (tx) => {
    const env = await lockEnvironment(inTransaction(scope, tx), name);
    if (patch.description !== undefined) {
      await environmentsRepository.update(tx, org.id, env.id, {
        description: patch.description,
        last_modified_at: now,
      });
    }
    if (patch.included_environments !== undefined) {
      if (env.type !== 'logical') {
        throw new BadRequestError('Only a logical environment includes other environments', {
          'body.included_environments': 'allowed only on a logical environment',
        });
      }
      const ids = await resolveMembers(
        tx,
        org,
        patch.included_environments ?? [],
        'body.included_environments',
      );
      await environmentsRepository.setMembers(tx, org.id, env.id, ids);
      await environmentsRepository.update(tx, org.id, env.id, { last_modified_at: now });
    }
    if (patch.policies !== undefined) {
      await environmentsRepository.update(tx, org.id, env.id, { last_modified_at: now });
      return setPolicies(inTransaction(scope, tx), env, patch.policies ?? [], 'body.policies');
    }
    return null;
  });
  announce(scope, outcome);
}

/** Spec endpoints 8 and 7: attach or detach named policies; a change makes a snapshot. */
export async function changePolicies(
  scope: OrgScope,
  name: string,
  names: readonly string[],
  mode: 'attach' | 'detach',
): Promise<void> {
  const { org, now } = scope;
  const outcome = await scope.db.transaction().execute(async (tx) => {
    const env = await lockEnvironment(inTransaction(scope, tx), name);
    const policies = await resolvePolicies(tx, org, names, 'body.policy_names');
    const ids = policies.map((p) => p.id);
    const n =
      mode === 'attach'
        ? await environmentsRepository.attachPolicies(tx, org.id, env.id, ids, now)
        : await environmentsRepository.detachPolicies(tx, org.id, env.id, ids);
    if (n === 0) {
      return null;
    }
    await environmentsRepository.update(tx, org.id, env.id, { last_modified_at: now });
    return reevaluateLocked(inTransaction(scope, tx), env, 'policies');
  });
  announce(scope, outcome);
}

/** Spec endpoint 9: renames; the new name must be free. */
export async function renameEnvironment(scope: OrgScope, name: string, newName: string): Promise<void> {
  const { org, now } = scope;
  await scope.db.transaction().execute(async (tx) => {
    const env = await lockEnvironment(inTransaction(scope, tx), name);
    if (newName === name) {
      return;
    }
    if (await environmentsRepository.findByName(tx, org.id, newName)) {
      throw new BadRequestError(
        `Environment named '${newName}' already exists in organization '${org.name}'`,
        {
          'body.new_name': 'already taken',
        },
      );
    }
    await environmentsRepository.update(tx, org.id, env.id, { name: newName, last_modified_at: now });
    await actionsRepository.renameEnvironment(tx, org.id, name, newName);
  });
}

export async function archiveEnvironment(scope: OrgScope, name: string): Promise<void> {
  const { org, now } = scope;
  await scope.db.transaction().execute(async (tx) => {
    const env = await lockEnvironment(inTransaction(scope, tx), name);
    await environmentsRepository.update(tx, org.id, env.id, { archived: true, last_modified_at: now });
  });
}

/** `PUT /environments/{org}/{logical}/join`: adds a physical environment to a logical one. */
export async function joinEnvironment(scope: OrgScope, logical: string, physical: string): Promise<void> {
  const { org, now } = scope;
  await scope.db.transaction().execute(async (tx) => {
    const env = await lockEnvironment(inTransaction(scope, tx), logical);
    if (env.type !== 'logical') {
      throw new BadRequestError(
        `Environment '${logical}' is not logical; only logical environments are joined`,
      );
    }
    const ids = await resolveMembers(tx, org, [physical], 'body.physical_env_name');
    await environmentsRepository.addMembers(tx, org.id, env.id, ids);
    await environmentsRepository.update(tx, org.id, env.id, { last_modified_at: now });
  });
}
