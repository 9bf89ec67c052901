/**
 * The tri-state compliance of an environment or a snapshot (semantics.md section 6): true, false,
 * or null when no policy is attached and nothing can be said. One mapping to its names.
 */

export type ComplianceName = 'COMPLIANT' | 'NON-COMPLIANT' | 'UNKNOWN';
export type ComplianceNameLower = 'compliant' | 'non-compliant' | 'unknown';

/** The name of a compliance: upper case in API bodies, lower case in notification payloads. */
export function complianceState(compliant: boolean | null): ComplianceName;
export function complianceState(compliant: boolean | null, casing: 'lower'): ComplianceNameLower;
export function complianceState(
  compliant: boolean | null,
  casing: 'upper' | 'lower' = 'upper',
): ComplianceName | ComplianceNameLower {
  const name: ComplianceName = compliant === null ? 'UNKNOWN' : compliant ? 'COMPLIANT' : 'NON-COMPLIANT';
  return casing === 'lower' ? (name.toLowerCase() as ComplianceNameLower) : name;
}
