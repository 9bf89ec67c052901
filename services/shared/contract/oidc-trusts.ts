/** Keyless CI: the OIDC ID-token issuers a service account trusts. */
import { z } from 'zod';
import { EpochSeconds } from './common.js';

/** Bounds of one trust's fields. */
export const OIDC_TRUST_BOUNDS = {
  maxIssuerLength: 512,
  maxAudienceLength: 256,
  maxClaims: 16,
  maxClaimNameLength: 64,
  maxClaimValueLength: 256,
} as const;

export const OIDC_TRUST_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
export const OIDC_CLAIM_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_.:-]*$/;

/** The name of a trust in its path. */
export const OidcTrustName = z
  .string()
  .min(1)
  .max(64)
  .regex(OIDC_TRUST_NAME_PATTERN, `must match pattern '${OIDC_TRUST_NAME_PATTERN.source}'`);

const b = OIDC_TRUST_BOUNDS;

/** Body of `PUT /service-accounts/{org}/{name}/oidc-trusts/{trust}`. */
export const OidcTrustPut = z
  .strictObject({
    issuer: z
      .string()
      .min(1)
      .max(b.maxIssuerLength)
      .refine((v) => URL.canParse(v), 'must be a URL'),
    audience: z.string().min(1).max(b.maxAudienceLength),
    claims: z
      .record(
        z
          .string()
          .max(b.maxClaimNameLength)
          .regex(OIDC_CLAIM_NAME_PATTERN, `must match pattern '${OIDC_CLAIM_NAME_PATTERN.source}'`),
        z.string().min(1).max(b.maxClaimValueLength),
      )
      .refine((c) => Object.keys(c).length >= 1, 'must name at least one claim')
      .refine((c) => Object.keys(c).length <= b.maxClaims, `must name at most ${b.maxClaims} claims`),
  })
  .meta({
    id: 'OidcTrustPut',
    description: `\`issuer\`: the token's \`iss\` exactly, an https URL (at most ${b.maxIssuerLength} characters). \`audience\`: a value of the token's \`aud\` (at most ${b.maxAudienceLength}). \`claims\`: 1 to ${b.maxClaims} claim names (at most ${b.maxClaimNameLength} characters) to patterns (1 to ${b.maxClaimValueLength}): the claim's exact value, or a prefix ending in \`*\`; at least one pattern other than a bare \`*\`.`,
  });
export type OidcTrustPut = z.infer<typeof OidcTrustPut>;

/** A trust as every trust endpoint returns it. */
export const OidcTrust = z
  .object({
    name: z.string(),
    service_account: z.string(),
    issuer: z.string(),
    audience: z.string(),
    claims: z.record(z.string(), z.string()),
    created_at: EpochSeconds,
    updated_at: EpochSeconds,
    created_by: z.string(),
  })
  .meta({ id: 'OidcTrust' });
export type OidcTrust = z.infer<typeof OidcTrust>;
