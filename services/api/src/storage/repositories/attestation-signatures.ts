/** The verification of attestations' signed evidence: one row per signed attestation, replaced when verified again. */
import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { AttestationSignaturesTable } from '../tables/evidence.js';

export type AttestationSignatureRow = Selectable<AttestationSignaturesTable>;

export const attestationSignaturesRepository = {
  /** Stores (or replaces) the verification of one attestation's signed evidence. */
  async put(db: Db, row: Insertable<AttestationSignaturesTable>): Promise<void> {
    await db
      .insertInto('attestation_signatures')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['org_id', 'attestation_id']).doUpdateSet((eb) => ({
          verified: eb.ref('excluded.verified'),
          kind: eb.ref('excluded.kind'),
          identity: eb.ref('excluded.identity'),
          issuer: eb.ref('excluded.issuer'),
          reason: eb.ref('excluded.reason'),
          verified_at: eb.ref('excluded.verified_at'),
        })),
      )
      .execute();
  },

  /** The verified signatures on attestations naming these fingerprints. */
  async verifiedFor(
    db: Db,
    orgId: string,
    fingerprints: readonly string[],
  ): Promise<Array<Pick<AttestationSignatureRow, 'fingerprint' | 'kind' | 'identity' | 'issuer'>>> {
    if (fingerprints.length === 0) {
      return [];
    }
    return db
      .selectFrom('attestation_signatures')
      .select(['fingerprint', 'kind', 'identity', 'issuer'])
      .distinct()
      .where('org_id', '=', orgId)
      .where('verified', '=', true)
      .where('fingerprint', 'in', fingerprints)
      .execute();
  },
};
