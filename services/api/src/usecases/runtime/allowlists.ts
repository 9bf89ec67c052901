/** Allow-listed fingerprints (semantics.md section 6), as the organization's list shows them. */
import type { z } from 'zod';
import type { AllowlistEntry } from '../../../../shared/contract/allowlists.js';
import { allowlistsRepository } from '../../storage/repositories/allowlists.js';
import { epochSeconds } from '../../time.js';
import type { OrgScope } from '../scope/org-scope.js';

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
