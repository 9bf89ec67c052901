/** Resolving a fingerprint prefix (semantics.md section 3: one match answers, several are ambiguous). */

export type PrefixResolution =
  { kind: 'one'; fingerprint: string } | { kind: 'none' } | { kind: 'ambiguous'; candidates: string[] };

/** Resolves `prefix` among the distinct fingerprints that start with it. */
export function resolveFingerprintPrefix(prefix: string, matches: readonly string[]): PrefixResolution {
  const distinct = [...new Set(matches.filter((m) => m.startsWith(prefix)))].sort();
  if (distinct.includes(prefix)) {
    return { kind: 'one', fingerprint: prefix };
  }
  if (distinct.length === 0) {
    return { kind: 'none' };
  }
  if (distinct.length === 1) {
    return { kind: 'one', fingerprint: distinct[0]! };
  }
  return { kind: 'ambiguous', candidates: distinct };
}
