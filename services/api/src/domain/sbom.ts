/**
 * Software bills of materials (CycloneDX 1.4-1.6 and SPDX 2.2-2.3, JSON): which format a document
 * is, told by its content, and the package URLs of its components, normalised so that one
 * package is one key whatever its spelling (type, namespace, name, version; qualifiers are kept
 * for display but never matched).
 */
import { PackageURL } from 'packageurl-js';

export const CYCLONEDX_VERSIONS = ['1.4', '1.5', '1.6'] as const;
export const SPDX_VERSIONS = ['SPDX-2.2', 'SPDX-2.3'] as const;

/**
 * What one attestation indexes at most, over all its documents: distinct components, and distinct
 * versions of one package (type, namespace, name). Past either, the attestation is still stored
 * and its `sbom_index` says what was left out.
 */
export interface SbomLimits {
  maxComponents: number;
  maxVersionsPerPackage: number;
}

export const DEFAULT_SBOM_LIMITS: SbomLimits = { maxComponents: 20_000, maxVersionsPerPackage: 100 };

/** A package URL split into the parts matched on, and its canonical text. */
export interface NormalisedPurl {
  type: string;
  namespace: string;
  name: string;
  /** '' when the purl names no version. */
  version: string;
  /** The canonical purl, qualifiers and subpath included. */
  purl: string;
}

/** What indexing one document found. */
export interface SbomDocumentResult {
  format: 'CycloneDX' | 'SPDX' | null;
  specVersion: string | null;
  /** Distinct package URLs found (when indexed). */
  components: NormalisedPurl[];
  /** Package URLs that did not parse. */
  skipped: number;
  /** Why the document was not indexed; null when it was. */
  reason: string | null;
}

/** Parses and normalises a package URL; throws with the library's message when it is malformed. */
export function parsePurl(text: string): NormalisedPurl {
  const p = PackageURL.fromString(text.trim());
  return {
    type: p.type,
    namespace: p.namespace ?? '',
    name: p.name,
    version: p.version ?? '',
    purl: p.toString(),
  };
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The SBOM format a parsed JSON value claims by its content, if any. */
export function sbomFormatOf(doc: unknown): 'CycloneDX' | 'SPDX' | null {
  if (!isObject(doc)) {
    return null;
  }
  if (doc.bomFormat === 'CycloneDX') {
    return 'CycloneDX';
  }
  if (typeof doc.spdxVersion === 'string') {
    return 'SPDX';
  }
  return null;
}

/** The package URL texts of one document, in document order, or why it cannot be indexed. */
export interface SbomPurlTexts {
  format: 'CycloneDX' | 'SPDX' | null;
  specVersion: string | null;
  purls: string[];
  /** Why the document is not indexed; null when it can be. */
  reason: string | null;
}

const refused = (
  format: SbomPurlTexts['format'],
  specVersion: string | null,
  reason: string,
): SbomPurlTexts => ({
  format,
  specVersion,
  purls: [],
  reason,
});

/** The package URL texts of a CycloneDX or SPDX document (not yet parsed), or why it cannot be indexed. */
export function sbomPurlTexts(doc: unknown): SbomPurlTexts {
  const format = sbomFormatOf(doc);
  if (!format || !isObject(doc)) {
    return refused(null, null, 'not a CycloneDX or SPDX JSON document');
  }
  if (format === 'CycloneDX') {
    const version = typeof doc.specVersion === 'string' ? doc.specVersion : null;
    if (!version || !(CYCLONEDX_VERSIONS as readonly string[]).includes(version)) {
      return refused(
        format,
        version,
        `CycloneDX specVersion ${JSON.stringify(doc.specVersion ?? null)} is not supported (${CYCLONEDX_VERSIONS.join(', ')})`,
      );
    }
    if (doc.components !== undefined && !Array.isArray(doc.components)) {
      return refused(format, version, 'CycloneDX "components" is not an array');
    }
    const walked = cycloneDxPurls((doc.components as unknown[] | undefined) ?? []);
    return typeof walked === 'string'
      ? refused(format, version, walked)
      : { format, specVersion: version, purls: walked, reason: null };
  }
  const version = doc.spdxVersion as string;
  if (!(SPDX_VERSIONS as readonly string[]).includes(version)) {
    return refused(
      format,
      version,
      `SPDX version ${JSON.stringify(version)} is not supported (${SPDX_VERSIONS.join(', ')})`,
    );
  }
  if (doc.packages !== undefined && !Array.isArray(doc.packages)) {
    return refused(format, version, 'SPDX "packages" is not an array');
  }
  const walked = spdxPurls((doc.packages as unknown[] | undefined) ?? []);
  return typeof walked === 'string'
    ? refused(format, version, walked)
    : { format, specVersion: version, purls: walked, reason: null };
}

/**
 * The purls of CycloneDX components, nested ones (assemblies) included, in document order; or
 * why not. The walk keeps its own stack of (array, position) frames: no recursion, and no copy
 * of an array however large or deep.
 */
function cycloneDxPurls(top: unknown[]): string[] | string {
  const purls: string[] = [];
  const stack: Array<{ list: unknown[]; at: number }> = [{ list: top, at: 0 }];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    if (frame.at >= frame.list.length) {
      stack.pop();
      continue;
    }
    const c = frame.list[frame.at];
    frame.at += 1;
    if (!isObject(c)) {
      return 'a CycloneDX component is not an object';
    }
    if (c.purl !== undefined) {
      if (typeof c.purl !== 'string') {
        return 'a component "purl" is not a string';
      }
      purls.push(c.purl);
    }
    if (c.components !== undefined) {
      if (!Array.isArray(c.components)) {
        return 'a nested CycloneDX "components" is not an array';
      }
      stack.push({ list: c.components as unknown[], at: 0 });
    }
  }
  return purls;
}

/** The purl references of SPDX packages, in document order; or why not. */
function spdxPurls(packages: unknown[]): string[] | string {
  const purls: string[] = [];
  for (const p of packages) {
    if (!isObject(p)) {
      return 'an SPDX package is not an object';
    }
    if (p.externalRefs === undefined) {
      continue;
    }
    if (!Array.isArray(p.externalRefs)) {
      return 'an SPDX package\'s "externalRefs" is not an array';
    }
    for (const ref of p.externalRefs as unknown[]) {
      if (!isObject(ref) || ref.referenceType !== 'purl') {
        continue;
      }
      if (typeof ref.referenceLocator !== 'string') {
        return 'an SPDX purl reference has no "referenceLocator" string';
      }
      purls.push(ref.referenceLocator);
    }
  }
  return purls;
}

/** What adding one purl text to an index did. */
export type SbomAddOutcome = 'indexed' | 'duplicate' | 'malformed' | 'over-components' | 'over-versions';

/**
 * The distinct components of one attestation, over all its documents, within `limits`: a purl is
 * left out once the attestation holds `maxComponents`, or once its package holds
 * `maxVersionsPerPackage` versions. Counts what it left out and why.
 */
export class SbomIndexer {
  private readonly byPurl = new Map<string, NormalisedPurl>();
  private readonly versions = new Map<string, Set<string>>();
  /** Components left out by `maxComponents`, and by `maxVersionsPerPackage`. */
  overComponents = 0;
  overVersions = 0;

  constructor(readonly limits: SbomLimits) {}

  /** Whether the index holds as many components as it may. */
  get full(): boolean {
    return this.byPurl.size >= this.limits.maxComponents;
  }

  get components(): NormalisedPurl[] {
    return [...this.byPurl.values()];
  }

  get size(): number {
    return this.byPurl.size;
  }

  add(text: string): { outcome: SbomAddOutcome; purl?: string } {
    let p: NormalisedPurl;
    try {
      p = parsePurl(text);
    } catch {
      return { outcome: 'malformed' };
    }
    if (this.byPurl.has(p.purl)) {
      return { outcome: 'duplicate', purl: p.purl };
    }
    if (this.full) {
      this.overComponents += 1;
      return { outcome: 'over-components' };
    }
    const pkg = `${p.type}\u0000${p.namespace}\u0000${p.name}`;
    let seen = this.versions.get(pkg);
    if (!seen) {
      seen = new Set();
      this.versions.set(pkg, seen);
    }
    if (!seen.has(p.version) && seen.size >= this.limits.maxVersionsPerPackage) {
      this.overVersions += 1;
      return { outcome: 'over-versions' };
    }
    seen.add(p.version);
    this.byPurl.set(p.purl, p);
    return { outcome: 'indexed', purl: p.purl };
  }

  /** Why components were left out; null when none was. */
  leftOutReason(): string | null {
    const why: string[] = [];
    if (this.overComponents > 0) {
      why.push(
        `${this.overComponents} past the bound of ${this.limits.maxComponents} components per attestation`,
      );
    }
    if (this.overVersions > 0) {
      why.push(
        `${this.overVersions} past the bound of ${this.limits.maxVersionsPerPackage} versions of one package per attestation`,
      );
    }
    return why.length === 0 ? null : `components left out: ${why.join('; ')}`;
  }
}

/** The package URLs of one CycloneDX or SPDX document within `limits`, or why it cannot be indexed. */
export function extractSbomComponents(
  doc: unknown,
  limits: SbomLimits = DEFAULT_SBOM_LIMITS,
): SbomDocumentResult {
  const texts = sbomPurlTexts(doc);
  if (texts.reason !== null || texts.format === null || texts.specVersion === null) {
    return {
      format: texts.format,
      specVersion: texts.specVersion,
      components: [],
      skipped: 0,
      reason: texts.reason,
    };
  }
  const index = new SbomIndexer(limits);
  let skipped = 0;
  for (const text of texts.purls) {
    if (index.add(text).outcome === 'malformed') {
      skipped += 1;
    }
  }
  return {
    format: texts.format,
    specVersion: texts.specVersion,
    components: index.components,
    skipped,
    reason: null,
  };
}
