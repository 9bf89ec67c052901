/**
 * Finding SBOMs in an attestation's evidence: the custom attestation's data, the attached file,
 * or the members of the attached `evidence.tgz` the CLI builds from several files. Told by
 * content, never by file name. Detection is a cheap look at bytes or at two keys, so attestations
 * without an SBOM pay nothing; reading and indexing happen only for candidates, and whatever goes
 * wrong is recorded on the attestation (`sbom_index`), never failing it.
 */
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import tar from 'tar-stream';
import type { SbomIndex } from '../../../../shared/contract/exposure.js';
import { extractSbomComponents, sbomFormatOf, type NormalisedPurl } from '../../domain/sbom.js';

const gunzipAsync = promisify(gunzip);

/**
 * Archive members read at most, and the bytes an archive may expand to: in memory, per request,
 * so a small upload that expands a thousandfold (a gzip bomb) costs at most this much.
 */
const MAX_ARCHIVE_MEMBERS = 1_000;
const MAX_ARCHIVE_MIB = 32;
const MAX_ARCHIVE_BYTES = MAX_ARCHIVE_MIB * 1024 * 1024;
/** SBOM documents one attestation indexes at most. */
const MAX_DOCUMENTS = 20;

/** Where an SBOM may be: the attestation's data (already parsed), or its evidence file. */
export type SbomSource = { kind: 'data'; doc: unknown } | { kind: 'file'; filename: string; data: Buffer };

const CYCLONEDX_KEY = Buffer.from('"bomFormat"');
const SPDX_KEY = Buffer.from('"spdxVersion"');

/** Whether the bytes could be an SBOM JSON document: a JSON object naming either format's key. */
function looksLikeSbomJson(data: Buffer): boolean {
  let i = 0;
  if (data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) {
    i = 3;
  } // UTF-8 byte order mark
  while (i < data.length && (data[i] === 0x20 || data[i] === 0x0a || data[i] === 0x0d || data[i] === 0x09)) {
    i++;
  }
  return data[i] === 0x7b && (data.includes(CYCLONEDX_KEY) || data.includes(SPDX_KEY));
}

const isGzip = (data: Buffer) => data.length > 2 && data[0] === 0x1f && data[1] === 0x8b;

/**
 * The SBOM source of an attestation, if it may have one: custom data that names a format, an
 * attached JSON file naming a format's key, or an attached gzip archive (looked into when read).
 */
export function sbomSourceOf(
  attestationData: unknown,
  evidence: { filename: string; data: Buffer } | null,
): SbomSource | null {
  if (sbomFormatOf(attestationData)) {
    return { kind: 'data', doc: attestationData };
  }
  if (evidence && (isGzip(evidence.data) || looksLikeSbomJson(evidence.data))) {
    return { kind: 'file', filename: evidence.filename, data: evidence.data };
  }
  return null;
}

/** What indexing found: the attestation's `sbom_index`, and the distinct components to store. */
export interface SbomReading {
  index: SbomIndex;
  components: NormalisedPurl[];
}

/** Reads and indexes the SBOM documents of a source; undefined when an archive holds none (or is unreadable). */
export async function readSbom(source: SbomSource): Promise<SbomReading | undefined> {
  const documents: SbomIndex['documents'] = [];
  const byPurl = new Map<string, NormalisedPurl>();
  const add = (where: string, doc: unknown) => {
    const r = extractSbomComponents(doc);
    documents.push({
      source: where,
      format: r.format,
      spec_version: r.specVersion,
      components: r.components.length,
      skipped: r.skipped,
      reason: r.reason,
    });
    for (const c of r.components) {
      byPurl.set(c.purl, c);
    }
  };
  const addBytes = (where: string, data: Buffer) => {
    let doc: unknown;
    try {
      doc = JSON.parse(data.toString('utf8').replace(/^\uFEFF/, ''));
    } catch (err) {
      documents.push({
        source: where,
        format: null,
        spec_version: null,
        components: 0,
        skipped: 0,
        reason: `not valid JSON: ${(err as Error).message}`,
      });
      return;
    }
    add(where, doc);
  };

  if (source.kind === 'data') {
    add('attestation_data', source.doc);
  } else if (!isGzip(source.data)) {
    addBytes(source.filename, source.data);
  } else {
    let members: Array<{ name: string; data: Buffer }>;
    try {
      members = await sbomMembers(source.data);
    } catch (err) {
      if ((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') {
        // Too large to look into: say so, since it may well hold an SBOM.
        members = [];
        documents.push({
          source: source.filename,
          format: null,
          spec_version: null,
          components: 0,
          skipped: 0,
          reason: `the archive expands beyond ${MAX_ARCHIVE_MIB} MiB: not looked into`,
        });
      } else {
        // Not a tar archive we can read (a gzipped log, say): it is kept as evidence; nothing in
        // it is known to be an SBOM, so there is nothing to report either.
        return undefined;
      }
    }
    if (members.length === 0 && documents.length === 0) {
      return undefined;
    }
    for (const m of members) {
      addBytes(`${source.filename}:${m.name}`, m.data);
    }
  }

  const components = [...byPurl.values()];
  const indexed = documents.some((d) => d.reason === null);
  return {
    index: {
      indexed,
      components: components.length,
      reason: indexed ? null : (documents.find((d) => d.reason !== null)?.reason ?? null),
      documents,
    },
    components,
  };
}

/** The members of a gzipped tar archive that look like SBOM JSON (bounded in count and bytes). */
async function sbomMembers(gz: Buffer): Promise<Array<{ name: string; data: Buffer }>> {
  const archive = await gunzipAsync(gz, { maxOutputLength: MAX_ARCHIVE_BYTES });
  const found: Array<{ name: string; data: Buffer }> = [];
  const extract = tar.extract();
  let members = 0;
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
        const data = Buffer.concat(chunks);
        if (header.type === 'file' && found.length < MAX_DOCUMENTS && looksLikeSbomJson(data)) {
          found.push({ name: header.name, data });
        }
        next();
      });
      stream.on('error', reject);
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
    extract.end(archive);
  });
  return found;
}
