/**
 * The attestations that name an evidence file, by organization and sha256: the collector of
 * files no attestation names (usecases/evidence-store.ts) anti-joins on it. Partial: most
 * attestations carry no file. Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create index attestations_evidence_sha256_idx on attestations (org_id, evidence_sha256)
    where evidence_sha256 is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists attestations_evidence_sha256_idx`.execute(db);
}
