/**
 * Actions (semantics.md section 7): upsert by name, the server assigns the number; triggers are
 * validated against the action type; targets keep their identity and delivery records across
 * updates, and pending notifications of replaced targets are dropped.
 */
import type { Action, ActionTarget } from '../../../../shared/contract/actions.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { newId } from '../../ids.js';
import { epochSeconds } from '../../time.js';
import { invalidTriggers } from '../../domain/triggers.js';
import type { Db } from '../../storage/database.js';
import { actionsRepository, type ActionRow, type TargetInput } from '../../storage/repositories/actions.js';
import { environmentsRepository } from '../../storage/repositories/environments.js';
import type { OrgRef, OrgScope } from '../scope/org-scope.js';

export interface ActionInput {
  name: string;
  type: 'env' | 'flow';
  environments: string[];
  flows: string[];
  triggers: string[];
  targets: ActionTarget[];
}

function targetInput(t: ActionTarget): TargetInput {
  switch (t.type) {
    case 'SLACK':
      return { type: 'SLACK', webhook: t.webhook, payload_version: null, emails: null, secret: null };
    case 'WEBHOOK':
      return {
        type: 'WEBHOOK',
        webhook: t.webhook,
        payload_version: t.payload_version,
        emails: null,
        secret: t.secret ?? null,
      };
    case 'EMAIL':
      return { type: 'EMAIL', webhook: null, payload_version: null, emails: t.emails, secret: null };
  }
}

async function validate(db: Db, org: OrgRef, input: ActionInput): Promise<void> {
  const bad = invalidTriggers(input.type, input.triggers);
  if (bad.length > 0) {
    throw new BadRequestError('Input payload validation failed', {
      'body.triggers': `not ${input.type === 'env' ? 'an environment' : 'a flow'} trigger: ${bad.join(', ')}`,
    });
  }
  if (input.type === 'env' && input.environments.length > 0) {
    const found = await environmentsRepository.findByNames(db, org.id, input.environments);
    const missing = input.environments.filter((n) => !found.some((e) => e.name === n));
    if (missing.length > 0) {
      throw new BadRequestError(
        `Environment named '${missing[0]}' does not exist for organization '${org.name}'`,
        {
          'body.environments': `unknown environments: ${missing.join(', ')}`,
        },
      );
    }
  }
}

/** Creates or updates by name (or, with `number`, updates that action); returns whether it was created. */
export async function putAction(
  scope: OrgScope,
  input: ActionInput,
  number?: number,
): Promise<{ created: boolean; action: ActionRow }> {
  const { db, org, now } = scope;
  const who = scope.actor;
  await validate(db, org, input);
  const result = await db.transaction().execute(async (tx) => {
    let existing =
      number !== undefined ? await actionsRepository.findByNumber(tx, org.id, number) : undefined;
    if (number !== undefined && !existing) {
      throw new NotFoundError(`Action number ${number} does not exist in organization '${org.name}'`);
    }
    existing ??= await actionsRepository.findByName(tx, org.id, input.name);
    if (existing && existing.type !== input.type) {
      throw new BadRequestError(`Action '${input.name}' is a ${existing.type} action`, {
        'body.type': `must be ${existing.type}`,
      });
    }
    if (existing) {
      if (existing.name !== input.name && (await actionsRepository.findByName(tx, org.id, input.name))) {
        throw new BadRequestError(`Action named '${input.name}' already exists`, {
          'body.name': 'already taken',
        });
      }
      await actionsRepository.update(tx, org.id, existing.id, { ...input, last_modified_at: now });
      await actionsRepository.replaceTargets(tx, org.id, existing.id, input.targets.map(targetInput));
      return { created: false, action: existing };
    }
    const action = await actionsRepository.insert(tx, {
      org_id: org.id,
      id: newId(),
      name: input.name,
      type: input.type,
      environments: input.environments,
      flows: input.flows,
      triggers: input.triggers,
      created_by: who,
      created_at: now,
      last_modified_at: now,
    });
    await actionsRepository.replaceTargets(tx, org.id, action.id, input.targets.map(targetInput));
    return { created: true, action };
  });
  // This replica's cached actions are stale; the others hear of the change.
  scope.services.catalog.bump(org.id);
  return result;
}

export async function findAction(scope: OrgScope, number: number): Promise<ActionRow> {
  const { db, org } = scope;
  const row = await actionsRepository.findByNumber(db, org.id, number);
  if (!row) {
    throw new NotFoundError(`Action number ${number} does not exist in organization '${org.name}'`);
  }
  return row;
}

const latest = (dates: Array<Date | null>): Date | null =>
  dates.reduce<Date | null>((m, d) => (d && (!m || d > m) ? d : m), null);

/**
 * A webhook or Slack address reduced to its scheme and host: the path and query of such URLs
 * often are the credential (Slack's incoming webhooks), so only callers who may change actions
 * see them whole.
 */
export function maskAddress(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '';
  }
}

/**
 * Actions as read back, with each target's delivery record and `is_failing`. Webhook and Slack
 * addresses are whole only with `fullAddresses` (callers who may write actions); signing
 * secrets are never shown, only whether a target has one.
 */
export async function presentActions(
  scope: OrgScope,
  rows: readonly ActionRow[],
  fullAddresses: boolean,
): Promise<Action[]> {
  const { db, org } = scope;
  const targets = await actionsRepository.targets(
    db,
    org.id,
    rows.map((r) => r.id),
  );
  return rows.map((r) => {
    const ts = targets.get(r.id) ?? [];
    const lastSuccess = latest(ts.map((t) => t.last_success_at));
    const lastFailure = latest(ts.map((t) => t.last_failure_at));
    return {
      name: r.name,
      type: r.type,
      number: r.number,
      environments: r.type === 'env' ? r.environments : null,
      flows: r.type === 'flow' ? r.flows : null,
      triggers: r.triggers,
      targets: ts.map((t) => ({
        type: t.type,
        ...(t.webhook !== null ? { webhook: fullAddresses ? t.webhook : maskAddress(t.webhook) } : {}),
        ...(t.payload_version !== null ? { payload_version: t.payload_version } : {}),
        ...(t.type === 'WEBHOOK' ? { has_secret: t.secret !== null } : {}),
        ...(t.emails !== null ? { emails: t.emails } : {}),
        last_success_at: t.last_success_at ? epochSeconds(t.last_success_at) : null,
        last_failure_at: t.last_failure_at ? epochSeconds(t.last_failure_at) : null,
        last_error: t.last_error,
      })),
      created_by: r.created_by,
      is_created_from_slack_app: false,
      // A target is failing when its last attempt failed.
      is_failing: ts.some(
        (t) =>
          t.last_failure_at !== null && (t.last_success_at === null || t.last_failure_at > t.last_success_at),
      ),
      last_success_timestamp: lastSuccess ? epochSeconds(lastSuccess) : null,
      last_failure_timestamp: lastFailure ? epochSeconds(lastFailure) : null,
      created_at: epochSeconds(r.created_at),
      last_modified_at: epochSeconds(r.last_modified_at),
    };
  });
}

/** The organization's actions (of one type when given), as read back. */
export async function listActions(
  scope: OrgScope,
  type: 'env' | 'flow' | undefined,
  fullAddresses: boolean,
): Promise<Action[]> {
  const { db, org } = scope;
  return presentActions(scope, await actionsRepository.list(db, org.id, type), fullAddresses);
}

/** One action by number, as read back. */
export async function getAction(scope: OrgScope, number: number, fullAddresses: boolean): Promise<Action> {
  const action = await findAction(scope, number);
  return (await presentActions(scope, [action], fullAddresses))[0]!;
}

/** Deletes an action by number; NotFoundError when there is none. */
export async function deleteAction(scope: OrgScope, number: number): Promise<void> {
  const { db, org } = scope;
  const action = await findAction(scope, number);
  await actionsRepository.delete(db, org.id, action.id);
  scope.services.catalog.bump(org.id);
}
