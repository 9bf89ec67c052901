/**
 * A Policy's content as the resource holds it (YAML text, or the same document as an object)
 * made comparable with what Verity stores: the YAML to send and a canonical form of the
 * document, so formatting, key order and comments never make a new policy version.
 */
import { createHash } from 'node:crypto';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';

export interface PolicyContent {
  /** The text to upload: the resource's own text, or the object written as YAML. */
  yaml: string;
  /** The document as canonical JSON (keys sorted). */
  canonical: string;
  /** sha256 of `canonical`. */
  hash: string;
}

/** A copy with keys sorted and undefined dropped: equal documents give equal JSON. */
export function canonical(v: unknown): unknown {
  if (Array.isArray(v)) {
    return v.map(canonical);
  }
  if (typeof v !== 'object' || v === null) {
    return v;
  }
  return Object.fromEntries(
    Object.keys(v)
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
  );
}

/** The canonical JSON of a YAML document; throws on text that is not YAML. */
export function canonicalYaml(text: string): string {
  return JSON.stringify(canonical(parseYaml(text) ?? null));
}

/** Normalises a Policy's `spec.content`; throws when YAML text does not parse. */
export function policyContent(content: string | Record<string, unknown>): PolicyContent {
  const yaml = typeof content === 'string' ? content : stringifyYaml(content);
  const json = typeof content === 'string' ? canonicalYaml(content) : JSON.stringify(canonical(content));
  return { yaml, canonical: json, hash: createHash('sha256').update(json).digest('hex') };
}

/** Whether stored YAML says the same as the content (false when it does not parse). */
export function sameContent(storedYaml: string, content: PolicyContent): boolean {
  try {
    return canonicalYaml(storedYaml) === content.canonical;
  } catch {
    return false;
  }
}
