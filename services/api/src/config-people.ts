/** Settings of people's sign-in through an OpenID Provider, as config.ts reads them. */
import { z } from 'zod';
import type { Reading } from '../../shared/config.js';
import { OrgName } from '../../shared/contract/common.js';
import { ROLES } from './domain/roles.js';

/** Issuer URLs as compared: no trailing slash. */
export function parseIssuerList(v: string | undefined): string[] {
  return (v ?? '')
    .split(',')
    .map((s) => s.trim().replace(/\/+$/, ''))
    .filter((s) => s.length > 0);
}

/** `{"<group>": {"<org>": "<role>"}}`: which role a group gives in which organization. */
const GroupRoles = z.record(
  z.string().min(1).max(256),
  z.record(OrgName, z.enum(ROLES)).refine((m) => Object.keys(m).length > 0, 'names no organization'),
);
export type GroupRoles = z.infer<typeof GroupRoles>;

export function readGroupRoles(raw: string | undefined): Reading<GroupRoles> {
  if (raw === undefined || raw.trim() === '') {
    return { ok: true, value: {} };
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err) {
    return { ok: false, problem: `must be JSON: ${(err as Error).message}` };
  }
  const parsed = GroupRoles.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      problem:
        `must map groups to {"<organization>": "<role>"} (roles: ${ROLES.join(', ')}): ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`.trim(),
    };
  }
  return { ok: true, value: parsed.data };
}

/** Sign-in needs a client, and an https issuer unless the issuer is named as allowed over http. */
export function checkOidc(
  env: {
    VERITY_OIDC_ISSUER?: string;
    VERITY_OIDC_CLIENT_ID?: string;
    VERITY_OIDC_INSECURE_ISSUERS: string[];
  },
  ctx: z.RefinementCtx,
): void {
  const issuer = env.VERITY_OIDC_ISSUER;
  if (issuer === undefined) {
    return;
  }
  if (!env.VERITY_OIDC_CLIENT_ID) {
    ctx.addIssue({
      code: 'custom',
      path: ['VERITY_OIDC_CLIENT_ID'],
      message: 'is required with VERITY_OIDC_ISSUER',
    });
  }
  const bare = issuer.replace(/\/+$/, '');
  if (new URL(issuer).protocol !== 'https:' && !env.VERITY_OIDC_INSECURE_ISSUERS.includes(bare)) {
    ctx.addIssue({
      code: 'custom',
      path: ['VERITY_OIDC_ISSUER'],
      message: 'must be https (name it in VERITY_OIDC_INSECURE_ISSUERS to allow http, for tests and labs)',
    });
  }
}

export interface OidcConfig {
  issuer: string;
  clientId: string;
  clientSecret: string | undefined;
  scopes: string;
  groupsClaim: string;
  /** What the console's button says: "Sign in with <providerName>". */
  providerName: string;
  groupRoles: GroupRoles;
  sessionIdleMs: number;
  sessionMaxMs: number;
}
