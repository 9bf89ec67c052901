/** Service accounts and their API keys (reference/cli-requests.md section 3.11). */
import { z } from 'zod';
import { EpochSeconds } from './common.js';

/** The four roles of semantics.md section 2, as service-account privileges. */
export const Privilege = z.enum(['admin', 'member', 'snapshotter', 'reader']);
export type Privilege = z.infer<typeof Privilege>;

export const SERVICE_ACCOUNT_NAME_PATTERN = /^[a-zA-Z0-9-]+$/;

/** A display name given to a service account; without one, its name is shown. */
const DisplayName = z.string().trim().min(1).max(255);

/** A service account as every endpoint returns it (the Terraform provider reads every field). */
export const ServiceAccount = z
  .object({
    name: z.string(),
    /** The display name given on create or update, else the name. */
    display_name: z.string(),
    description: z.string(),
    privilege: Privilege,
    created_at: EpochSeconds,
    created_by: z.string(),
    /** The id of the user or service account that created it; null when the server did (bootstrap). */
    creating_user_id: z.string().nullable(),
  })
  .meta({ id: 'ServiceAccount' });
export type ServiceAccount = z.infer<typeof ServiceAccount>;

/** Body of `POST /service-accounts/{org}`. */
export const ServiceAccountCreate = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(64)
      .regex(SERVICE_ACCOUNT_NAME_PATTERN, `must match pattern '${SERVICE_ACCOUNT_NAME_PATTERN.source}'`),
    description: z.string().max(512).optional(),
    privilege: Privilege.default('reader'),
    display_name: DisplayName.optional(),
  })
  .meta({ id: 'ServiceAccountCreate' });

/**
 * Body of `PATCH /service-accounts/{org}/{name}`: only the fields present change; null clears the
 * description, and makes the display name the account's name again.
 */
export const ServiceAccountPatch = z
  .strictObject({
    description: z.string().max(512).nullable().optional(),
    privilege: Privilege.optional(),
    display_name: DisplayName.nullable().optional(),
  })
  .meta({ id: 'ServiceAccountPatch' });

/** The last moment an expiry may name (2100-01-01). */
export const MAX_EXPIRES_AT = 4102444800;

/** Body of `POST /service-accounts/{org}/{name}/api-keys`. `expires_at` 0 or absent: never expires. */
export const ApiKeyCreate = z
  .strictObject({
    description: z.string().min(1).max(256),
    expires_at: z.number().int().min(0).max(MAX_EXPIRES_AT).nullable().optional(),
  })
  .meta({ id: 'ApiKeyCreate' });

/** Body of `POST .../api-keys/{id}/rotate`. */
export const ApiKeyRotate = z
  .strictObject({
    grace_period_hours: z.number().int().min(0).max(720).optional(),
    expires_at: z.number().int().min(0).max(MAX_EXPIRES_AT).nullable().optional(),
  })
  .meta({ id: 'ApiKeyRotate' });

/** A new key: the only response that carries the secret. */
export const ApiKeyCreated = z
  .object({
    id: z.string(),
    key: z.string(),
    description: z.string(),
    created_at: EpochSeconds,
    expires_at: EpochSeconds,
  })
  .meta({ id: 'ApiKeyCreated' });

/** A rotated key: the new secret, and when the old one stops working. */
export const ApiKeyRotated = ApiKeyCreated.extend({ grace_period_expires_at: EpochSeconds }).meta({
  id: 'ApiKeyRotated',
});

/** Key metadata: never the secret. `expires_at` and `last_used_at` are 0 when not set. */
export const ApiKeyInfo = z
  .object({
    id: z.string(),
    description: z.string(),
    created_at: EpochSeconds,
    expires_at: EpochSeconds,
    last_used_at: EpochSeconds,
  })
  .meta({ id: 'ApiKeyInfo' });
export type ApiKeyInfo = z.infer<typeof ApiKeyInfo>;
