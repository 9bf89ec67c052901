/**
 * Allow-listed fingerprints (semantics.md section 6): adding one (it counts as compliant in its
 * environment, which is re-evaluated), and the organization's list.
 */
import type { z } from 'zod';
import type { AllowlistEntry } from '../../../../shared/contract/allowlists.js';
import { BadRequestError } from '../../errors.js';
import { newId } from '../../ids.js';
import { allowlistsRepository } from '../../storage/repositories/allowlists.js';
import { epochSeconds } from '../../time.js';
import { enqueueNotifications } from '../notifications/notifications.js';
import { inTransaction, type OrgScope } from '../scope/org-scope.js';
import { lockEnvironment } from './environments.js';
import { reevaluateLocked } from './report-ingest.js';
import { announce } from './snapshot-write.js';

/** Every allow-listed fingerprint of every environment of the organization. */
export async function listAllowlist(scope: OrgScope): Promise<Array<z.infer<typeof AllowlistEntry>>> {
  const { db, org } = scope;
  return (await allowlistsRepository.list(db, org.id)).map((r) => ({
    artifact_name: r.artifact_name,
    fingerprint: r.fingerprint,
    environment_name: r.environment_name,
    timestamp: epochSeconds(r.created_at),
    user_name: r.created_by,
    description: r.description,
  }));
}

/**
 * `PUT /allowlists/{org}/{env}`: the fingerprint counts as compliant there (section 8). Fires
 * ON_ALLOWED_ARTIFACT and re-evaluates, which may make a snapshot (became-compliant).
 */
export async function allowArtifact(
  scope: OrgScope,
  envName: string,
  entry: { fingerprint: string; artifactName: string; description: string },
): Promise<boolean> {
  const { org, now } = scope;
  const who = scope.actor;
  const { created, outcome, notifications } = await scope.db.transaction().execute(async (tx) => {
    const env = await lockEnvironment(inTransaction(scope, tx), envName);
    if (env.type === 'logical') {
      throw new BadRequestError(
        `Environment '${envName}' is logical; allow-list in its physical environments`,
      );
    }
    const created = await allowlistsRepository.upsert(tx, {
      org_id: org.id,
      id: newId(),
      environment_id: env.id,
      fingerprint: entry.fingerprint,
      artifact_name: entry.artifactName,
      description: entry.description,
      created_by: who,
      created_at: now,
    });
    const notifications = created
      ? await enqueueNotifications(
          tx,
          org.id,
          [
            {
              trigger: 'ON_ALLOWED_ARTIFACT',
              org: org.name,
              timestamp: now.getTime() / 1000,
              environment: env.name,
              description: `${entry.artifactName} was allow-listed: ${entry.description}`,
              artifact: { name: entry.artifactName, fingerprint: entry.fingerprint },
            },
          ],
          now,
        )
      : 0;
    const outcome = await reevaluateLocked(inTransaction(scope, tx), env, 'allowlist', who);
    return { created, outcome, notifications };
  });
  announce(scope, outcome, { snapshot: null, notifications });
  return created;
}
