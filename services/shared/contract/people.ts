/** People: who is calling, an organization's members, and the audit log of writes. */
import { z } from 'zod';
import { CappedCount, EpochSeconds } from './common.js';
import { QueryTime } from './exposure.js';

const RoleName = z.enum(['reader', 'snapshotter', 'member', 'admin']);

/** `GET /me`: the caller, and the organizations they may enter with their role there. */
export const Me = z
  .object({
    kind: z.enum(['user', 'service_account']),
    name: z.string(),
    email: z.string().nullable(),
    organizations: z.array(z.object({ org: z.string(), role: RoleName })),
  })
  .meta({ id: 'Me' });

/** One person of an organization. */
export const Member = z
  .object({
    name: z.string().meta({ description: 'Unique handle' }),
    display_name: z.string(),
    email: z.string().nullable(),
    role: RoleName,
    source: z
      .enum(['admin', 'oidc'])
      .meta({ description: 'oidc: from the identity provider groups at the last sign-in' }),
    signs_in_with: z.enum(['identity_provider', 'api_key']),
    last_sign_in_at: EpochSeconds.nullable(),
  })
  .meta({ id: 'Member' });
export const Members = z.object({ members: z.array(Member) }).meta({ id: 'Members' });

/** Who did something: a person or a service account (with a CI token's subject when federated). */
export const AuditActor = z
  .object({
    kind: z
      .enum(['user', 'service_account', 'system'])
      .meta({ description: 'system: a job of the server itself (the retention job)' }),
    name: z.string(),
    email: z.string().nullable(),
    subject: z.string().optional().meta({ description: 'The CI token subject a service account acted with' }),
  })
  .meta({ id: 'AuditActor' });

export const AuditEntry = z
  .object({
    at: EpochSeconds,
    actor: AuditActor,
    action: z.string().meta({ description: 'The API operation (operationId), or signIn' }),
    resource: z.string().meta({ description: 'The path written to' }),
    request_id: z.string().nullable(),
    ip: z.string().nullable(),
  })
  .meta({ id: 'AuditEntry' });

export const AuditLog = z
  .object({
    entries: z.array(AuditEntry),
    next: z.string().nullable().meta({ description: 'The next page, or null on the last' }),
    ...CappedCount,
  })
  .meta({ id: 'AuditLog' });

/** `GET /audit-log/{org}` query: newest first, in pages. */
export const AuditLogQuery = z.strictObject({
  from: QueryTime.optional(),
  to: QueryTime.optional(),
  actor: z.string().min(1).max(320).optional().meta({ description: 'A name or e-mail, exactly' }),
  action: z.string().min(1).max(100).optional(),
  page: z.coerce.number().int().min(1).max(1000).default(1),
  per_page: z.coerce.number().int().min(1).max(100).default(50),
});
