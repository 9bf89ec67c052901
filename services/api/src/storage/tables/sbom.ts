/** Table types of SBOM components indexed by package URL (migration 0350). */

export interface SbomComponentsTable {
  org_id: string;
  attestation_id: string;
  /** Position among the attestation's distinct purls. */
  ord: number;
  trail_id: string;
  /** The artifact the attestation names; null: every artifact of the trail. */
  fingerprint: string | null;
  purl_type: string;
  /** '' when the purl has none. */
  purl_namespace: string;
  purl_name: string;
  /** '' when the purl has none. */
  purl_version: string;
  /** The canonical purl, qualifiers included. */
  purl: string;
}

export interface SbomTables {
  sbom_components: SbomComponentsTable;
}
