/** Organizations: the `{org}` segment, and its feature switches. */
import { z } from 'zod';
import { EpochSeconds } from './common.js';

/** An organization as `GET /organizations/{org}` returns it. */
export const Organization = z
  .object({
    name: z.string(),
    display_name: z.string(),
    experimental_features_enabled: z.boolean(),
    created_at: EpochSeconds,
  })
  .meta({ id: 'Organization' });
export type Organization = z.infer<typeof Organization>;

/** Body of `PUT /organizations/{org}/experimental_features` (kosli enable/disable beta). */
export const ExperimentalFeaturesInput = z
  .strictObject({ experimental_features_enabled: z.boolean() })
  .meta({ id: 'ExperimentalFeaturesInput' });

/** Body of `GET /user/default-org`. */
export const DefaultOrg = z.object({ default_org_name: z.string().nullable() }).meta({ id: 'DefaultOrg' });
