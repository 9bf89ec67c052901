/**
 * `attestation_signatures`: the verification of an attestation's signed evidence (a Sigstore
 * bundle or DSSE envelope as its evidence file), one row per such attestation: whether it
 * verified, its kind, the signer's identity and issuer, and why it did not. The attestation
 * itself is never changed: verifying again (air-gapped, from the kept file) replaces this row.
 * `fingerprint` is the artifact the attestation names; `attestation_signatures_verified_idx`
 * finds the verified signatures of running fingerprints when a policy asks for them.
 * Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table attestation_signatures (
    org_id text not null,
    attestation_id text not null,
    fingerprint text,
    verified boolean not null,
    kind text not null,
    identity text,
    issuer text,
    reason text,
    verified_at timestamptz not null,
    primary key (org_id, attestation_id)
  )`.execute(db);
  await sql`create index attestation_signatures_verified_idx on attestation_signatures (org_id, fingerprint)
    where verified`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table attestation_signatures`.execute(db);
}
