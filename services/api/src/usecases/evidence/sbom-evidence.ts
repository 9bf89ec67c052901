/**
 * Finding SBOMs in an attestation's evidence: the custom attestation's data, the attached file,
 * or the members of the attached `evidence.tgz` the CLI builds from several files. Told by
 * content, never by file name. Detection is a cheap look at bytes or at two keys, so attestations
 * without an SBOM pay nothing; reading and indexing happen only for candidates, and whatever goes
 * wrong is recorded on the attestation (`sbom_index`), never failing it.
 */
import { archiveMembers, isGzip } from '../../archive-members.js';
import type { SbomIndex } from '../../../../shared/contract/exposure.js';
import {
  DEFAULT_SBOM_LIMITS,
  SbomIndexer,
  sbomFormatOf,
  sbomPurlTexts,
  type NormalisedPurl,
  type SbomLimits,
} from '../../domain/sbom.js';

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

/**
 * Whether a file starting with these bytes may be an SBOM: a gzip archive, or a JSON object (the
 * whole file tells). A file whose first bytes are all blanks may still be one.
 */
export function mayBeSbomFile(head: Buffer): boolean {
  if (isGzip(head)) {
    return true;
  }
  let i = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  while (i < head.length && (head[i] === 0x20 || head[i] === 0x0a || head[i] === 0x0d || head[i] === 0x09)) {
    i++;
  }
  return i === head.length || head[i] === 0x7b;
}

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

/** Purls parsed between two yields to the event loop: a few milliseconds of work. */
const SLICE = 1_000;
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

type DocumentEntry = SbomIndex['documents'][number];
const unread = (source: string, reason: string): DocumentEntry => ({
  source,
  format: null,
  spec_version: null,
  components: 0,
  skipped: 0,
  reason,
});

/**
 * Indexes the documents of one attestation into one bounded union, in slices that yield to the
 * event loop. Once the union is full, the rest of a document is counted but not parsed, and later
 * documents are not read at all.
 */
class AttestationIndex {
  readonly documents: DocumentEntry[] = [];
  readonly index: SbomIndexer;

  constructor(limits: SbomLimits) {
    this.index = new SbomIndexer(limits);
  }

  async add(where: string, doc: unknown): Promise<void> {
    const texts = sbomPurlTexts(doc);
    const entry: DocumentEntry = {
      source: where,
      format: texts.format,
      spec_version: texts.specVersion,
      components: 0,
      skipped: 0,
      reason: texts.reason,
    };
    this.documents.push(entry);
    const mine = new Set<string>();
    for (let i = 0; i < texts.purls.length; i++) {
      if (this.index.full) {
        this.index.overComponents += texts.purls.length - i;
        break;
      }
      if (i > 0 && i % SLICE === 0) {
        await yieldToLoop();
      }
      const r = this.index.add(texts.purls[i]!);
      if (r.outcome === 'malformed') {
        entry.skipped += 1;
      } else if (r.purl !== undefined) {
        mine.add(r.purl);
      }
    }
    entry.components = mine.size;
  }

  async addBytes(where: string, data: Buffer): Promise<void> {
    if (this.index.full) {
      this.documents.push(
        unread(
          where,
          `not read: the attestation holds ${this.index.limits.maxComponents} components, its bound`,
        ),
      );
      return;
    }
    let doc: unknown;
    try {
      doc = JSON.parse(data.toString('utf8').replace(/^\uFEFF/, ''));
    } catch (err) {
      this.documents.push(unread(where, `not valid JSON: ${(err as Error).message}`));
      return;
    }
    await yieldToLoop();
    await this.add(where, doc);
  }

  reading(): SbomReading {
    const components = this.index.components;
    const indexed = this.documents.some((d) => d.reason === null);
    const skipped = this.index.overComponents + this.index.overVersions;
    return {
      index: {
        indexed,
        components: components.length,
        skipped,
        reason: indexed
          ? this.index.leftOutReason()
          : (this.documents.find((d) => d.reason !== null)?.reason ?? null),
        documents: this.documents,
      },
      components,
    };
  }
}

/**
 * Reads and indexes the SBOM documents of a source, within `limits` for the attestation as a
 * whole; undefined when an archive holds none (or is unreadable).
 */
export async function readSbom(
  source: SbomSource,
  limits: SbomLimits = DEFAULT_SBOM_LIMITS,
): Promise<SbomReading | undefined> {
  const at = new AttestationIndex(limits);
  if (source.kind === 'data') {
    await at.add('attestation_data', source.doc);
    return at.reading();
  }
  if (!isGzip(source.data)) {
    await at.addBytes(source.filename, source.data);
    return at.reading();
  }
  let members: Array<{ name: string; data: Buffer }>;
  try {
    members = await sbomMembers(source.data);
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'ERR_BUFFER_TOO_LARGE') {
      // Not a tar archive we can read (a gzipped log, say): it is kept as evidence; nothing in
      // it is known to be an SBOM, so there is nothing to report either.
      return undefined;
    }
    // Too large to look into: say so, since it may well hold an SBOM.
    at.documents.push(
      unread(source.filename, `the archive expands beyond ${MAX_ARCHIVE_MIB} MiB: not looked into`),
    );
    return at.reading();
  }
  if (members.length === 0) {
    return undefined;
  }
  for (const m of members) {
    await at.addBytes(`${source.filename}:${m.name}`, m.data);
  }
  return at.reading();
}

/** The members of a gzipped tar archive that look like SBOM JSON (bounded in count and bytes). */
function sbomMembers(gz: Buffer): Promise<Array<{ name: string; data: Buffer }>> {
  return archiveMembers(
    gz,
    { maxBytes: MAX_ARCHIVE_BYTES, maxMembers: MAX_ARCHIVE_MEMBERS, limit: MAX_DOCUMENTS },
    (_name, data) => looksLikeSbomJson(data),
  );
}
