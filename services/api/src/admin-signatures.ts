/**
 * `npm run admin -- signatures verify <org> [--attestation <id>]`: verifies again, from the kept
 * evidence files and with the trust material configured now, the signed evidence of an
 * organization's attestations (every one verified before, or the one named; a bundle inside an
 * attached archive too), and replaces the
 * stored verification. It reads nothing but the database and the settings' files, so it runs
 * air-gapped, e.g. after the trusted root or a key was rotated or revoked.
 */
import type { DatabaseHandle } from './storage/create-db.js';
import { attestationSignaturesRepository } from './storage/repositories/attestation-signatures.js';
import { attestationsRepository } from './storage/repositories/attestations.js';
import { databaseEvidenceStore, readAll } from './usecases/evidence/evidence-store.js';
import type { EvidenceStore } from './usecases/scope/services.js';
import { verifySignedEvidence, type SignatureTrust } from './workers/signed-evidence.mjs';
import { verifyEvidenceFile } from './workers/signed-evidence-files.js';

/** Attestations read per page. */
const PAGE = 200;

/** The lines printed: one per attestation verified, then a count. */
export async function verifySignaturesAgain(
  db: DatabaseHandle['db'],
  org: { id: string; name: string },
  trust: SignatureTrust,
  only: string | undefined,
  now: Date,
  store: EvidenceStore = databaseEvidenceStore,
): Promise<string[]> {
  const lines: string[] = [];
  let verified = 0;
  let failed = 0;
  let after = '';
  for (;;) {
    const ids = only
      ? [only]
      : (
          await db
            .selectFrom('attestation_signatures')
            .select('attestation_id')
            .where('org_id', '=', org.id)
            .where('attestation_id', '>', after)
            .orderBy('attestation_id')
            .limit(PAGE)
            .execute()
        ).map((r) => r.attestation_id);
    if (ids.length === 0) {
      break;
    }
    const rows = await attestationsRepository.findByIds(db, org.id, ids);
    if (only && rows.length === 0) {
      lines.push(`${only}: no such attestation in organization '${org.name}'`);
    }
    for (const a of rows) {
      const stored = a.evidence_sha256 ? await store.get(db, org.id, a.evidence_sha256) : undefined;
      const content = stored ? await readAll(stored.stream, stored.size) : undefined;
      const file = { filename: a.evidence_filename ?? 'evidence', data: content ?? Buffer.alloc(0) };
      const result = content
        ? await verifyEvidenceFile(file, (candidate) =>
            verifySignedEvidence(trust, candidate, a.artifact_fingerprint),
          )
        : null;
      if (!result) {
        lines.push(
          `${a.id}: no signed evidence (${content ? 'the file is not a bundle or envelope' : 'no evidence file'})`,
        );
        continue;
      }
      await attestationSignaturesRepository.put(db, {
        org_id: org.id,
        attestation_id: a.id,
        fingerprint: a.artifact_fingerprint,
        ...result,
        verified_at: now,
      });
      const who = result.identity
        ? ` by ${result.identity}${result.issuer ? ` (${result.issuer})` : ''}`
        : '';
      lines.push(
        `${a.id} ${a.flow_name}/${a.trail_name}/${a.name}: ${result.verified ? `verified${who}` : `not verified: ${result.reason}`}`,
      );
      if (result.verified) {
        verified++;
      } else {
        failed++;
      }
    }
    if (only) {
      break;
    }
    after = ids[ids.length - 1]!;
  }
  lines.push(`${verified} verified, ${failed} not verified`);
  return lines;
}
