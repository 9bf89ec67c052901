/** Allowlists (reference/cli-requests.md 3.3 `allow artifact`; semantics.md section 8). */
import { z } from 'zod';
import { EpochSeconds, Fingerprint } from './common.js';

/** Body of `PUT /allowlists/{org}/{env}`. */
export const AllowlistPut = z
  .strictObject({
    artifact_fingerprint: Fingerprint,
    artifact_name: z.string().min(1).max(2048),
    description: z.string().min(1).max(10_000),
  })
  .meta({ id: 'AllowlistPut' });

/** One entry of `GET /allowlists/{org}`. */
export const AllowlistEntry = z
  .object({
    artifact_name: z.string(),
    fingerprint: z.string(),
    environment_name: z.string(),
    timestamp: EpochSeconds,
    user_name: z.string(),
    description: z.string(),
  })
  .meta({ id: 'AllowlistEntry' });
