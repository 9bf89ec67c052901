/**
 * What an exposure page by package name reads, bounded by what it shows.
 *
 * `sbom_packages`: per attestation and package (type, name, namespace), how many of its
 * components are versions of that package. A page places itself among all matches by these
 * counts per artifact, one row per attestation that holds the package, instead of counting every
 * matching component (50,000 rows read for one SBOM of 50,000 versions, on every page). Written
 * with the components it counts, in the same statement, whose insert checks the trail; deleting a
 * trail deletes its rows, as it does its components. Filled here from the components indexed so
 * far.
 *
 * `sbom_components_trail_purl_idx`: each trail's components in the order a page lists them
 * (package, purl, attestation), with the columns a page shows, so a page of one artifact's
 * matching versions is read in order from the index instead of sorting every match on each
 * request. It replaces the (org_id, trail_id) index, its prefix, which deleting a trail's
 * components used. Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]!.s;
  await sql`create table sbom_packages (
    org_id text not null,
    purl_type text not null,
    purl_name text not null,
    purl_namespace text not null,
    attestation_id text not null,
    trail_id text not null,
    fingerprint text collate "C",
    components integer not null,
    primary key (org_id, purl_type, purl_name, purl_namespace, attestation_id)
  )`.execute(db);
  await sql`create index sbom_packages_trail_idx on sbom_packages (org_id, trail_id)`.execute(db);
  await sql`insert into sbom_packages (org_id, purl_type, purl_name, purl_namespace, attestation_id,
      trail_id, fingerprint, components)
    select org_id, purl_type, purl_name, purl_namespace, attestation_id, trail_id, fingerprint, count(*)::int
    from sbom_components
    group by org_id, purl_type, purl_name, purl_namespace, attestation_id, trail_id, fingerprint`.execute(db);
  await sql`
    create function verity_delete_trail_packages() returns trigger language plpgsql as $$
    begin
      delete from ${sql.table(`${schema}.sbom_packages`)} x using gone g
        where x.org_id = g.org_id and x.trail_id = g.id;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger trails_delete_packages after delete on trails
    referencing old table as gone
    for each statement execute function verity_delete_trail_packages()`.execute(db);
  await sql`create index sbom_components_trail_purl_idx on sbom_components
    (org_id, trail_id, purl_type, purl_name, purl_namespace, purl, attestation_id)
    include (fingerprint, purl_version)`.execute(db);
  await sql`drop index sbom_components_trail_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index sbom_components_trail_idx on sbom_components (org_id, trail_id)`.execute(db);
  await sql`drop index if exists sbom_components_trail_purl_idx`.execute(db);
  await sql`drop trigger if exists trails_delete_packages on trails`.execute(db);
  await sql`drop function if exists verity_delete_trail_packages()`.execute(db);
  await sql`drop table sbom_packages`.execute(db);
}
