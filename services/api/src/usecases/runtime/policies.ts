/**
 * Policies (semantics.md section 6): create or update from YAML; a change of content is a new
 * immutable version, a change of description a metadata update. Environments using a policy are
 * marked for re-evaluation when it gets a new version.
 */
import { logIndexes } from '../log/log.js';
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import type { Policy } from '../../../../shared/contract/policies.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { newId } from '../../ids.js';
import { epochSeconds } from '../../time.js';
import { formatPolicyProblem, parsePolicyYaml, type ParsedPolicy } from '../../domain/policy.js';
import type { Db } from '../../storage/database.js';
import { environmentsRepository } from '../../storage/repositories/environments.js';
import { policiesRepository, type PolicyRow } from '../../storage/repositories/policies.js';
import type { OrgRef, OrgScope } from '../scope/org-scope.js';
import { markForReevaluation } from './reevaluation.js';

export interface PolicyInput {
  name: string;
  description: string;
  comment: string;
  yaml: string;
}

type PutResult = { created: boolean; newVersion: boolean; marked: number };

/** One write of a policy file: where, by whom, when and what. */
interface PolicyWrite {
  tx: Db;
  org: OrgRef;
  input: PolicyInput;
  who: string;
  now: Date;
  parsed: ParsedPolicy;
  hash: string;
}

/** The parsed policy file; a ValidationError naming every problem when it is invalid. */
function parseOrThrow(yaml: string): ParsedPolicy {
  const parsed = parsePolicyYaml(yaml);
  if (!parsed.ok) {
    const errors: Record<string, string> = {};
    for (const p of parsed.problems) {
      const key = `policy_file.${p.path}`;
      errors[key] = errors[key] ? `${errors[key]}; ${formatPolicyProblem(p)}` : formatPolicyProblem(p);
    }
    throw new ValidationError(errors, `Invalid policy file: ${formatPolicyProblem(parsed.problems[0]!)}`);
  }
  return parsed.policy;
}

function insertVersion(w: PolicyWrite, policyId: string, version: number) {
  return policiesRepository.insertVersion(w.tx, {
    org_id: w.org.id,
    policy_id: policyId,
    version,
    policy_yaml: w.input.yaml,
    content_hash: w.hash,
    parsed: w.parsed,
    comment: w.input.comment,
    created_by: w.who,
    created_at: w.now,
  });
}

function insertEvent(
  w: PolicyWrite,
  policyId: string,
  type: 'creation' | 'metadata_update' | 'new_version',
  data: Record<string, unknown>,
) {
  return policiesRepository.insertEvent(w.tx, {
    org_id: w.org.id,
    id: newId(),
    policy_id: policyId,
    type,
    at: w.now,
    user_name: w.who,
    data,
  });
}

async function createPolicy(w: PolicyWrite): Promise<PutResult> {
  // A concurrent create of the same name fails on the unique index: 409, and the retry updates.
  const policy = await policiesRepository.insert(w.tx, {
    org_id: w.org.id,
    id: newId(),
    name: w.input.name,
    description: w.input.description,
    type: 'env',
    created_by: w.who,
    created_at: w.now,
    last_modified_at: w.now,
    latest_version: 1,
  });
  if (!policy) {
    throw new Error('policy insert raced');
  }
  await insertVersion(w, policy.id, 1);
  await insertEvent(w, policy.id, 'creation', { version: 1 });
  return { created: true, newVersion: true, marked: 0 };
}

async function updatePolicy(w: PolicyWrite, policy: PolicyRow): Promise<PutResult> {
  const { tx, org, input, now } = w;
  const latest = await policiesRepository.version(tx, org.id, policy.id, policy.latest_version);
  let newVersion = false;
  if (latest?.content_hash !== w.hash) {
    const n = policy.latest_version + 1;
    await insertVersion(w, policy.id, n);
    await policiesRepository.update(tx, org.id, policy.id, { latest_version: n, last_modified_at: now });
    await insertEvent(w, policy.id, 'new_version', { version: n, comment: input.comment });
    newVersion = true;
  }
  if (input.description !== policy.description) {
    await policiesRepository.update(tx, org.id, policy.id, {
      description: input.description,
      last_modified_at: now,
    });
    await insertEvent(w, policy.id, 'metadata_update', { description: input.description });
  }
  const marked = newVersion
    ? await markForReevaluation(
        tx,
        org.id,
        await environmentsRepository.environmentIdsUsingPolicy(tx, org.id, policy.id),
        `policy ${policy.name} v${policy.latest_version + 1}`,
        now,
      )
    : 0;
  return { created: false, newVersion, marked };
}

/** Creates or updates a policy; returns whether it was created and the environments marked. */
export async function putPolicy(scope: OrgScope, input: PolicyInput): Promise<PutResult> {
  const { db, org, now } = scope;
  const who = scope.actor;
  const parsed = parseOrThrow(input.yaml);
  const hash = createHash('sha256').update(input.yaml).digest('hex');
  const result = await db.transaction().execute(async (tx) => {
    const w: PolicyWrite = { tx, org, input, who, now, parsed, hash };
    const policy = await policiesRepository.lockByName(tx, org.id, input.name);
    return policy ? updatePolicy(w, policy) : createPolicy(w);
  });
  if (result.marked > 0) {
    scope.events.committed([{ type: 'reevaluation.marked', count: result.marked }]);
  }
  return result;
}

/** Policies with versions, events and consuming environments. */
export async function presentPolicies(
  scope: OrgScope,
  rows: readonly PolicyRow[],
): Promise<Array<z.infer<typeof Policy>>> {
  const { db, org } = scope;
  const ids = rows.map((r) => r.id);
  const [versions, events, consumers, logIndex] = await Promise.all([
    policiesRepository.versions(db, org.id, ids),
    policiesRepository.events(db, org.id, ids),
    policiesRepository.consumers(db, org.id, ids),
    logIndexes(db, org.id, 'policy', ids),
  ]);
  return rows.map((r) => ({
    name: r.name,
    description: r.description,
    type: r.type,
    created_by: r.created_by,
    created_at: epochSeconds(r.created_at),
    last_modified_at: epochSeconds(r.last_modified_at),
    archived: r.archived,
    versions: versions
      .filter((v) => v.policy_id === r.id)
      .map((v) => ({
        version: v.version,
        comment: v.comment,
        timestamp: epochSeconds(v.created_at),
        created_by: v.created_by,
        policy_yaml: v.policy_yaml,
      })),
    events: events
      .filter((e) => e.policy_id === r.id)
      .map((e) => ({ type: e.type, timestamp: epochSeconds(e.at), user: e.user_name, data: e.data })),
    consuming_envs: consumers.get(r.id) ?? [],
    log_index: logIndex(r.id),
  }));
}

export async function getPolicy(scope: OrgScope, name: string): Promise<PolicyRow> {
  const { db, org } = scope;
  const row = await policiesRepository.findByName(db, org.id, name);
  if (!row) {
    throw new NotFoundError(`Policy '${name}' does not exist in organization '${org.name}'`);
  }
  return row;
}

/** The organization's policies, as read back. */
export async function listPolicies(scope: OrgScope): Promise<Array<z.infer<typeof Policy>>> {
  const { db, org } = scope;
  return presentPolicies(scope, await policiesRepository.list(db, org.id));
}

/** One policy by name, as read back. */
export async function readPolicy(scope: OrgScope, name: string): Promise<z.infer<typeof Policy>> {
  return (await presentPolicies(scope, [await getPolicy(scope, name)]))[0]!;
}
