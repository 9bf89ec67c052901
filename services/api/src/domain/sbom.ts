/**
 * Software bills of materials (CycloneDX 1.4-1.6 and SPDX 2.2-2.3, JSON): which format a document
 * is, told by its content, and the package URLs of its components, normalised so that one
 * package is one key whatever its spelling (type, namespace, name, version; qualifiers are kept
 * for display but never matched).
 */
import { PackageURL } from 'packageurl-js';

export const CYCLONEDX_VERSIONS = ['1.4', '1.5', '1.6'] as const;
export const SPDX_VERSIONS = ['SPDX-2.2', 'SPDX-2.3'] as const;

/** Components one attestation indexes at most; a larger document is stored but not indexed. */
export const MAX_SBOM_COMPONENTS = 50_000;

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

const notIndexed = (
  format: SbomDocumentResult['format'],
  specVersion: string | null,
  reason: string,
): SbomDocumentResult => ({ format, specVersion, components: [], skipped: 0, reason });

/** The package URLs of a CycloneDX or SPDX document, or why it cannot be indexed. */
export function extractSbomComponents(doc: unknown): SbomDocumentResult {
  const format = sbomFormatOf(doc);
  if (!format || !isObject(doc)) {
    return notIndexed(null, null, 'not a CycloneDX or SPDX JSON document');
  }
  const purls: string[] = [];
  if (format === 'CycloneDX') {
    const version = typeof doc.specVersion === 'string' ? doc.specVersion : null;
    if (!version || !(CYCLONEDX_VERSIONS as readonly string[]).includes(version)) {
      return notIndexed(
        format,
        version,
        `CycloneDX specVersion ${JSON.stringify(doc.specVersion ?? null)} is not supported (${CYCLONEDX_VERSIONS.join(', ')})`,
      );
    }
    if (doc.components !== undefined && !Array.isArray(doc.components)) {
      return notIndexed(format, version, 'CycloneDX "components" is not an array');
    }
    // Nested components (assemblies) are components too; an explicit stack bounds the walk.
    const stack: unknown[] = [...((doc.components as unknown[] | undefined) ?? [])];
    while (stack.length > 0) {
      const c = stack.pop();
      if (!isObject(c)) {
        return notIndexed(format, version, 'a CycloneDX component is not an object');
      }
      if (c.purl !== undefined) {
        if (typeof c.purl !== 'string') {
          return notIndexed(format, version, 'a component "purl" is not a string');
        }
        purls.push(c.purl);
      }
      if (c.components !== undefined) {
        if (!Array.isArray(c.components)) {
          return notIndexed(format, version, 'a nested CycloneDX "components" is not an array');
        }
        stack.push(...(c.components as unknown[]));
      }
      if (purls.length > MAX_SBOM_COMPONENTS) {
        break;
      }
    }
    return collect(format, version, purls);
  }
  const version = doc.spdxVersion as string;
  if (!(SPDX_VERSIONS as readonly string[]).includes(version)) {
    return notIndexed(
      format,
      version,
      `SPDX version ${JSON.stringify(version)} is not supported (${SPDX_VERSIONS.join(', ')})`,
    );
  }
  if (doc.packages !== undefined && !Array.isArray(doc.packages)) {
    return notIndexed(format, version, 'SPDX "packages" is not an array');
  }
  for (const p of (doc.packages as unknown[] | undefined) ?? []) {
    if (!isObject(p)) {
      return notIndexed(format, version, 'an SPDX package is not an object');
    }
    if (p.externalRefs === undefined) {
      continue;
    }
    if (!Array.isArray(p.externalRefs)) {
      return notIndexed(format, version, 'an SPDX package\'s "externalRefs" is not an array');
    }
    for (const ref of p.externalRefs as unknown[]) {
      if (!isObject(ref) || ref.referenceType !== 'purl') {
        continue;
      }
      if (typeof ref.referenceLocator !== 'string') {
        return notIndexed(format, version, 'an SPDX purl reference has no "referenceLocator" string');
      }
      purls.push(ref.referenceLocator);
    }
    if (purls.length > MAX_SBOM_COMPONENTS) {
      break;
    }
  }
  return collect(format, version, purls);
}

function collect(format: 'CycloneDX' | 'SPDX', specVersion: string, purls: string[]): SbomDocumentResult {
  if (purls.length > MAX_SBOM_COMPONENTS) {
    return notIndexed(format, specVersion, `more than ${MAX_SBOM_COMPONENTS} components`);
  }
  const byPurl = new Map<string, NormalisedPurl>();
  let skipped = 0;
  for (const text of purls) {
    try {
      const p = parsePurl(text);
      byPurl.set(p.purl, p);
    } catch {
      skipped += 1;
    }
  }
  return { format, specVersion, components: [...byPurl.values()], skipped, reason: null };
}
