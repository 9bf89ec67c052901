/** Path and query parameters several routes share: flows, trails, repeated values, tag filters, fingerprints. */
import { z } from 'zod';
import { OrgName, ResourceName } from '../../../shared/contract/common.js';
import { TrailName } from '../../../shared/contract/evidence-common.js';

/** `{org}/{flow}` in a path. */
export const FlowParams = z.strictObject({ org: OrgName, flow: ResourceName });
/** `{org}/{flow}/.../{trail}` in a path. */
export const TrailParams = FlowParams.extend({ trail: TrailName });
/** `{org}/{env_name}` in a path. */
export const EnvParams = z.strictObject({ org: OrgName, env_name: ResourceName });

/** A query parameter that may repeat (`tag=a&tag=b`). */
export const Repeated = z
  .union([z.string().max(512), z.array(z.string().max(512)).max(50)])
  .optional()
  .transform((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]));

/** `key` or `key:value` (also `key=value`) tag filters. */
export function tagFilters(values: string[]): Array<{ key: string; value: string | null }> {
  return values.map((v) => {
    const m = /^([^:=]+)[:=](.*)$/.exec(v);
    return m ? { key: m[1]!, value: m[2]! } : { key: v, value: null };
  });
}

/** A fingerprint (or a 5-64 hex prefix) in a path. */
export const FingerprintParam = z
  .string()
  .regex(/^[a-f0-9]{5,64}$/, "must match pattern '^[a-f0-9]{5,64}$' (5 to 64 lowercase hex characters)");
