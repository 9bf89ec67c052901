/**
 * Custom attestation types (semantics.md section 8): JSON Schema and/or jq rules and summary
 * rows; every create of an existing name is a new immutable version; archivable.
 */
import type {
  AttestationType,
  CreateAttestationType,
} from '../../../../shared/contract/attestation-types.js';
import { ApiError, NotFoundError, ValidationError } from '../../errors.js';
import { newId } from '../../ids.js';
import { epochSeconds } from '../../time.js';
import type { Db } from '../../storage/database.js';
import {
  attestationTypesRepository,
  type AttestationTypeRow,
  type AttestationTypeVersionRow,
} from '../../storage/repositories/attestation-types.js';
import { toJson } from '../../storage/repositories/json.js';
import { transact, type OrgScope } from '../scope/org-scope.js';

/** Checks that the schema compiles and every jq program parses, naming each problem. */
export async function checkDefinition(
  scope: OrgScope,
  input: CreateAttestationType,
  schema: Record<string, unknown> | null,
): Promise<void> {
  const { evaluator } = scope.services;
  const orgId = scope.org.id;
  const rules = input.evaluator?.content_type === 'jq' ? input.evaluator.rules : [];
  const summary = input.summary ?? [];
  let problems;
  try {
    problems = await evaluator.check({ schema, rules, summary }, orgId);
  } catch (err) {
    if (err instanceof ApiError) {
      throw err;
    }
    throw new ValidationError({ data_json: `the type could not be checked: ${(err as Error).message}` });
  }
  const errors: Record<string, string> = {};
  if (problems.schema) {
    errors.type_schema = `not a valid JSON Schema: ${problems.schema}`;
  }
  for (const p of problems.rules) {
    errors[`data_json.evaluator.rules[${p.index}]`] = `not a valid jq program: ${p.error}`;
  }
  for (const p of problems.summary) {
    errors[`data_json.summary[${p.index}].expression`] = `not a valid jq program: ${p.error}`;
  }
  if (Object.keys(errors).length > 0) {
    throw new ValidationError(errors);
  }
}

/** Creates the type, or adds a version to it; returns the new version's number. Runs in a transaction. */
export async function saveAttestationType(
  ctx: OrgScope,
  input: CreateAttestationType,
  schema: Record<string, unknown> | null,
): Promise<number> {
  let type = await attestationTypesRepository.findByName(ctx.db, ctx.org.id, input.name, true);
  if (!type) {
    type = await attestationTypesRepository.insert(ctx.db, {
      org_id: ctx.org.id,
      id: newId(),
      name: input.name,
      description: input.description ?? null,
      created_by: ctx.actor,
      created_at: ctx.now,
      last_modified_at: ctx.now,
    });
    // A concurrent create of the same name committed first: add a version to that type.
    type ??= (await attestationTypesRepository.findByName(ctx.db, ctx.org.id, input.name, true))!;
  }
  const version = (await attestationTypesRepository.latestVersionNumber(ctx.db, ctx.org.id, type.id)) + 1;
  await attestationTypesRepository.insertVersion(ctx.db, {
    org_id: ctx.org.id,
    type_id: type.id,
    version,
    description: input.description ?? null,
    comment: input.comment ?? null,
    type_schema: toJson(schema),
    evaluator: toJson(input.evaluator ?? { content_type: 'default' }),
    summary: toJson(input.summary ?? null),
    created_by: ctx.actor,
    created_at: ctx.now,
  });
  await attestationTypesRepository.touch(ctx.db, ctx.org.id, type.id, {
    last_modified_at: ctx.now,
    description: input.description ?? type.description,
    archived: false,
  });
  return version;
}

/** The type by name; 404 otherwise. */
export async function getAttestationType(
  db: Db,
  orgId: string,
  orgName: string,
  name: string,
): Promise<AttestationTypeRow> {
  const type = await attestationTypesRepository.findByName(db, orgId, name);
  if (!type) {
    throw new NotFoundError(`Custom attestation type '${name}' does not exist in organization '${orgName}'`);
  }
  return type;
}

function presentVersion(v: AttestationTypeVersionRow): AttestationType['versions'][number] {
  return {
    version: v.version,
    comment: v.comment,
    description: v.description,
    timestamp: epochSeconds(v.created_at),
    created_by: v.created_by,
    type_schema: v.type_schema,
    evaluator: v.evaluator,
    summary: v.summary,
  };
}

/**
 * The wire form, versions newest first: clients read `versions[0]` as the version in force (the
 * Terraform provider does). With `version`, only that version and without the type's own timestamps.
 */
export function presentAttestationType(
  type: AttestationTypeRow,
  versions: AttestationTypeVersionRow[],
  orgName: string,
  version?: number,
): AttestationType {
  const base = { name: type.name, description: type.description, org: orgName, archived: type.archived };
  if (version !== undefined) {
    const v = versions.find((x) => x.version === version);
    if (!v) {
      throw new NotFoundError(`Custom attestation type '${type.name}' has no version ${version}`);
    }
    return { ...base, versions: [presentVersion(v)] };
  }
  return {
    ...base,
    created_by: type.created_by,
    created_at: epochSeconds(type.created_at),
    last_modified_at: epochSeconds(type.last_modified_at),
    versions: [...versions].sort((a, b) => b.version - a.version).map(presentVersion),
  };
}

/** The organization's custom attestation types with their versions. */
export async function listAttestationTypes(ctx: OrgScope): Promise<AttestationType[]> {
  const types = await attestationTypesRepository.list(ctx.db, ctx.org.id);
  const versions = await attestationTypesRepository.versions(
    ctx.db,
    ctx.org.id,
    types.map((t) => t.id),
  );
  return types.map((t) =>
    presentAttestationType(
      t,
      versions.filter((v) => v.type_id === t.id),
      ctx.org.name,
    ),
  );
}

/** One custom attestation type by name, or only its version `version` when given. */
export async function readAttestationType(
  ctx: OrgScope,
  name: string,
  version?: number,
): Promise<AttestationType> {
  const type = await getAttestationType(ctx.db, ctx.org.id, ctx.org.name, name);
  const versions = await attestationTypesRepository.versions(ctx.db, ctx.org.id, [type.id]);
  return presentAttestationType(type, versions, ctx.org.name, version);
}

/** Archives a custom attestation type: no new attestations of it. */
export async function archiveAttestationType(ctx: OrgScope, name: string): Promise<void> {
  const type = await getAttestationType(ctx.db, ctx.org.id, ctx.org.name, name);
  await attestationTypesRepository.touch(ctx.db, ctx.org.id, type.id, {
    archived: true,
    last_modified_at: ctx.now,
  });
  ctx.services.catalog.bump(ctx.org.id);
}

/**
 * `POST /custom-attestation-types/{org}`: checks the definition, stores it as the type or its next
 * version, and drops this replica's cached types at once (the next attestation evaluates it).
 */
export async function createAttestationType(
  scope: OrgScope,
  input: CreateAttestationType,
  schema: Record<string, unknown> | null,
): Promise<void> {
  await checkDefinition(scope, input, schema);
  await transact(scope, (s) => saveAttestationType(s, input, schema));
  scope.services.catalog.bump(scope.org.id);
}
