/**
 * SBOM components by package URL (CycloneDX, SPDX), one row per distinct purl of an attestation:
 * bound to the artifact the attestation names (`fingerprint`), or to every artifact of its trail
 * (`fingerprint` null). The lookup index leads with the organization and the purl's matched parts
 * (type, name, namespace, version), so an exposure query is one index range per organization;
 * the attestation's rows go with it. Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table sbom_components (
    org_id text not null,
    attestation_id text not null,
    ord integer not null,
    trail_id text not null,
    fingerprint text collate "C",
    purl_type text not null,
    purl_namespace text not null,
    purl_name text not null,
    purl_version text not null,
    purl text not null,
    primary key (org_id, attestation_id, ord),
    foreign key (org_id, attestation_id) references attestations(org_id, id) on delete cascade
  )`.execute(db);
  await sql`create index sbom_components_purl_idx on sbom_components
    (org_id, purl_type, purl_name, purl_namespace, purl_version)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table sbom_components`.execute(db);
}
