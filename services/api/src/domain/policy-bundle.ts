/**
 * Policy bundles of server-side evaluations (reference/peers-2026-11b.md 1.1): the checks the
 * interface makes on the files sent, which files are Rego (evaluated client-side only), which file
 * is the CEL entry, and the canonical text whose SHA-256 names the bundle in a decision.
 */
import { MAX_POLICY_BUNDLE_BYTES, MAX_POLICY_FILES } from '../../../shared/contract/evaluations.js';

/** The file evaluated when a bundle holds several. */
export const POLICY_ENTRY = 'policy.cel';

/** A problem with the files sent: the message and the field it concerns. */
export interface BundleProblem {
  message: string;
  field: string;
}

/** UTF-8 length of a text, without encoding it. */
export function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      n += 1;
    } else if (c < 0x800) {
      n += 2;
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      n += 4;
      i += 1;
    } else {
      n += 3;
    }
  }
  return n;
}

/** Why a bundle path is refused, or null: relative, slash-separated, no `..`, no empty segment. */
export function pathProblem(path: string): string | null {
  if (path === '') {
    return 'a file path is empty';
  }
  if (path.startsWith('/') || path.startsWith('\\') || /^[a-zA-Z]:/.test(path)) {
    return `file path '${path}' is absolute; paths are relative to the bundle`;
  }
  if (path.split(/[/\\]/).some((s) => s === '..')) {
    return `file path '${path}' contains '..'`;
  }
  return null;
}

/** The first problem of the files sent (count, paths, total size), or null. */
export function bundleProblem(files: Record<string, string>): BundleProblem | null {
  const paths = Object.keys(files);
  if (paths.length === 0) {
    return { message: 'policy bundle holds no files; send 1 to 100', field: 'body.policy.files' };
  }
  if (paths.length > MAX_POLICY_FILES) {
    return {
      message: `policy bundle holds ${paths.length} files, over the ${MAX_POLICY_FILES} file limit`,
      field: 'body.policy.files',
    };
  }
  for (const path of paths) {
    const problem = pathProblem(path);
    if (problem) {
      return { message: problem, field: `body.policy.files.${path}` };
    }
  }
  let bytes = 0;
  for (const path of paths) {
    bytes += utf8Length(path) + utf8Length(files[path]!);
  }
  if (bytes > MAX_POLICY_BUNDLE_BYTES) {
    return {
      message: `policy bundle is ${bytes} bytes, over the ${MAX_POLICY_BUNDLE_BYTES} byte limit`,
      field: 'body.policy.files',
    };
  }
  return null;
}

/** A Rego module begins (after comments and blank lines) with its `package` clause. */
const REGO_PACKAGE = /^(?:\s*(?:#[^\n]*)?\n)*\s*package\s+[A-Za-z_][\w.]*\s*(?:\n|$)/;

/** The bundle's files that are Rego: named `.rego`, or beginning with a `package` clause. */
export function regoFiles(files: Record<string, string>): string[] {
  return Object.keys(files)
    .filter((path) => path.toLowerCase().endsWith('.rego') || REGO_PACKAGE.test(files[path]!.slice(0, 4_096)))
    .sort();
}

/**
 * The file evaluated: the only file of a one-file bundle (whatever it is called), else
 * `policy.cel`; null when a bundle of several files has none.
 */
export function policyEntry(files: Record<string, string>): string | null {
  const paths = Object.keys(files);
  if (paths.length === 1) {
    return paths[0]!;
  }
  return Object.hasOwn(files, POLICY_ENTRY) ? POLICY_ENTRY : null;
}

/**
 * JSON with every object's keys in code-point order at every depth: the same value always gives
 * the same text, whatever order its keys were sent in.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    return JSON.stringify(value) ?? 'null';
  }
  if (Array.isArray(value)) {
    return `[${value.map(canonicalJson).join(',')}]`;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

/** The canonical text of a bundle, whose SHA-256 is the bundle's digest. */
export function canonicalBundle(files: Record<string, string>): string {
  return canonicalJson({ files });
}
