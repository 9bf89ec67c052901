/** Table types of SBOM components indexed by package URL (migrations 0350, 0383). */

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

/** Per attestation and package: how many of its components are versions of it (migration 0383). */
export interface SbomPackagesTable {
  org_id: string;
  purl_type: string;
  purl_name: string;
  purl_namespace: string;
  attestation_id: string;
  trail_id: string;
  fingerprint: string | null;
  components: number;
}

export interface SbomTables {
  sbom_components: SbomComponentsTable;
  sbom_packages: SbomPackagesTable;
}
