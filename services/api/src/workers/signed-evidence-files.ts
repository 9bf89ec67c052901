/**
 * The files of an attestation's evidence that may be signed evidence: the file itself, or, when
 * it is a gzipped tar archive (the kosli CLI tars several `--attachments` into `evidence.tgz`),
 * its members that look like a Sigstore bundle or DSSE envelope. Read in memory, bounded like
 * the SBOM reader: the archive expands to at most 32 MiB and 1,000 members, and at most
 * `MAX_SIGNED_MEMBERS` members are returned.
 */
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import tar from 'tar-stream';
import { looksSigned, type EvidenceFile, type SignatureResult } from './signed-evidence.mjs';

const gunzipAsync = promisify(gunzip);

const MAX_ARCHIVE_MEMBERS = 1_000;
const MAX_ARCHIVE_BYTES = 32 * 1024 * 1024;
/** Signed members of one archive verified at most. */
export const MAX_SIGNED_MEMBERS = 8;

const isGzip = (data: Uint8Array) => data.length > 2 && data[0] === 0x1f && data[1] === 0x8b;

/** The candidates, each named as the attestation shows it (`evidence.tgz:provenance.sigstore.json`). */
export async function signedEvidenceFiles(file: { filename: string; data: Buffer }): Promise<EvidenceFile[]> {
  if (!isGzip(file.data)) {
    return looksSigned(file) ? [file] : [];
  }
  let archive: Buffer;
  try {
    archive = await gunzipAsync(file.data, { maxOutputLength: MAX_ARCHIVE_BYTES });
  } catch {
    // Not readable, or too large to look into: kept as evidence, with nothing known to be signed.
    return [];
  }
  const found: EvidenceFile[] = [];
  const extract = tar.extract();
  let members = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      extract.on('entry', (header, stream, next) => {
        members += 1;
        if (members > MAX_ARCHIVE_MEMBERS) {
          stream.resume();
          extract.destroy(new Error(`more than ${MAX_ARCHIVE_MEMBERS} members`));
          return;
        }
        const chunks: Buffer[] = [];
        stream.on('data', (c: unknown) => void chunks.push(c as Buffer));
        stream.on('end', () => {
          const member = { filename: `${file.filename}:${header.name}`, data: Buffer.concat(chunks) };
          if (header.type === 'file' && found.length < MAX_SIGNED_MEMBERS && looksSigned(member)) {
            found.push(member);
          }
          next();
        });
        stream.on('error', reject);
      });
      extract.on('finish', resolve);
      extract.on('error', reject);
      extract.end(archive);
    });
  } catch {
    // A gzipped file that is not a tar archive (a log, say), or too many members.
    return [];
  }
  return found;
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
