/**
 * The files of an attestation's evidence that may be signed evidence: the file itself, or, when
 * it is a gzipped tar archive (the kosli CLI tars several `--attachments` into `evidence.tgz`),
 * its members that look like a Sigstore bundle or DSSE envelope. Read in memory, bounded like
 * the SBOM reader: the archive expands to at most 32 MiB and 1,000 members, and at most
 * `MAX_SIGNED_MEMBERS` members are returned.
 */
import { archiveMembers, isGzip } from '../archive-members.js';
import { looksSigned, type EvidenceFile, type SignatureResult } from './signed-evidence.mjs';

const MAX_ARCHIVE_MEMBERS = 1_000;
const MAX_ARCHIVE_BYTES = 32 * 1024 * 1024;
/** Signed members of one archive verified at most. */
export const MAX_SIGNED_MEMBERS = 8;

/** The candidates, each named as the attestation shows it (`evidence.tgz:provenance.sigstore.json`). */
export async function signedEvidenceFiles(file: { filename: string; data: Buffer }): Promise<EvidenceFile[]> {
  if (!isGzip(file.data)) {
    return looksSigned(file) ? [file] : [];
  }
  try {
    const members = await archiveMembers(
      file.data,
      { maxBytes: MAX_ARCHIVE_BYTES, maxMembers: MAX_ARCHIVE_MEMBERS, limit: MAX_SIGNED_MEMBERS },
      (name, data) => Boolean(looksSigned({ filename: `${file.filename}:${name}`, data })),
    );
    return members.map((m) => ({ filename: `${file.filename}:${m.name}`, data: m.data }));
  } catch {
    // Not a gzipped tar archive (a log, say), too large or with too many members: kept as
    // evidence, with nothing known to be signed.
    return [];
  }
}

/**
 * The verification of an evidence file: of the file, or of the signed members of an archive, the
 * first that verifies, else the first failure (naming the member); null when none is signed.
 */
export async function verifyEvidenceFile(
  file: { filename: string; data: Buffer },
  verify: (candidate: EvidenceFile) => Promise<SignatureResult | null> | SignatureResult | null,
): Promise<SignatureResult | null> {
  let first: SignatureResult | null = null;
  for (const candidate of await signedEvidenceFiles(file)) {
    const result = await verify(candidate);
    if (result?.verified) {
      return result;
    }
    if (result && !first) {
      first =
        candidate.filename === file.filename
          ? result
          : { ...result, reason: `${candidate.filename}: ${result.reason}` };
    }
  }
  return first;
}
