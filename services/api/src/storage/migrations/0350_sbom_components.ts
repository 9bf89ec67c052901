/**
 * SBOM components by package URL (CycloneDX, SPDX), one row per distinct purl of an attestation:
 * bound to the artifact the attestation names (`fingerprint`), or to every artifact of its trail
 * (`fingerprint` null). The lookup index leads with the organization and the purl's matched parts
 * (type, name, namespace, version), so an exposure query is one index range per organization.
 *
 * Rows are written with their attestation, in its transaction. Like the rest of a trail's
 * evidence (0305) they reference the trail through a statement trigger, not a per-row foreign
 * key: a document of thousands of components would otherwise pay one locked lookup per row, most
 * of its indexing time; and deleting a trail deletes its components. Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]!.s;
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
    primary key (org_id, attestation_id, ord)
  )`.execute(db);
  await sql`create index sbom_components_purl_idx on sbom_components
    (org_id, purl_type, purl_name, purl_namespace, purl_version)`.execute(db);
  await sql`create index sbom_components_trail_idx on sbom_components (org_id, trail_id)`.execute(db);
  await sql`
    create trigger sbom_components_trail_ref_ins
    after insert on sbom_components
    referencing new table as changed_rows
    for each statement execute function verity_check_trail_refs()`.execute(db);
  await sql`
    create trigger sbom_components_trail_ref_upd
    before update on sbom_components
    for each row when (new.org_id is distinct from old.org_id or new.trail_id is distinct from old.trail_id)
    execute function verity_check_trail_ref()`.execute(db);
  await sql`
    create function verity_delete_trail_components() returns trigger language plpgsql as $$
    begin
      delete from ${sql.table(`${schema}.sbom_components`)} x using gone g
        where x.org_id = g.org_id and x.trail_id = g.id;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger trails_delete_components after delete on trails
    referencing old table as gone
    for each statement execute function verity_delete_trail_components()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists trails_delete_components on trails`.execute(db);
  await sql`drop function if exists verity_delete_trail_components()`.execute(db);
  await sql`drop table sbom_components`.execute(db);
}
