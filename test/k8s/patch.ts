/**
 * The two patch formats the API server double accepts, as the API server applies them:
 * JSON merge patch (RFC 7386, `application/merge-patch+json`) and JSON patch (RFC 6902,
 * `application/json-patch+json`, what `@kubernetes/client-node` 1.x sends by default).
 */

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const isObject = (v: unknown): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 7386: objects merge key by key, `null` removes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) {
    return structuredClone(patch);
  }
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) {
      delete out[k];
    } else {
      out[k] = mergePatch(out[k], v);
    }
  }
  return out;
}

/** A patch the document cannot take: the API server answers 422 (or 409 for a failed `test`). */
export class PatchError extends Error {
  constructor(
    message: string,
    readonly testFailed = false,
  ) {
    super(message);
  }
}

interface Operation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  from?: string;
  value?: unknown;
}

const unescape = (token: string) => token.replace(/~1/g, '/').replace(/~0/g, '~');

function tokens(pointer: string): string[] {
  if (pointer === '') {
    return [];
  }
  if (!pointer.startsWith('/')) {
    throw new PatchError(`invalid JSON pointer '${pointer}'`);
  }
  return pointer.slice(1).split('/').map(unescape);
}

function get(doc: unknown, pointer: string): unknown {
  let node = doc;
  for (const t of tokens(pointer)) {
    if (Array.isArray(node)) {
      node = node[Number(t)];
    } else if (isObject(node) && Object.hasOwn(node, t)) {
      node = node[t];
    } else {
      throw new PatchError(`path '${pointer}' does not exist`);
    }
  }
  return node;
}

/** The parent container of a pointer and the last token; the parent must exist. */
function parentOf(doc: unknown, pointer: string): [Record<string, unknown> | unknown[], string] {
  const ts = tokens(pointer);
  const last = ts.pop();
  if (last === undefined) {
    throw new PatchError('the root cannot be the target here');
  }
  const parent = get(doc, ts.map((t) => '/' + t.replace(/~/g, '~0').replace(/\//g, '~1')).join(''));
  if (!Array.isArray(parent) && !isObject(parent)) {
    throw new PatchError(`no container at '${pointer}'`);
  }
  return [parent, last];
}

function arrayIndex(arr: unknown[], token: string, forAdd: boolean): number {
  if (forAdd && token === '-') {
    return arr.length;
  }
  const i = Number(token);
  if (!Number.isInteger(i) || i < 0 || i > arr.length - (forAdd ? 0 : 1)) {
    throw new PatchError(`array index '${token}' is out of range`);
  }
  return i;
}

function add(doc: unknown, pointer: string, value: unknown): unknown {
  if (pointer === '') {
    return structuredClone(value);
  }
  const [parent, last] = parentOf(doc, pointer);
  if (Array.isArray(parent)) {
    parent.splice(arrayIndex(parent, last, true), 0, structuredClone(value));
  } else {
    parent[last] = structuredClone(value);
  }
  return doc;
}

function remove(doc: unknown, pointer: string): unknown {
  const [parent, last] = parentOf(doc, pointer);
  if (Array.isArray(parent)) {
    parent.splice(arrayIndex(parent, last, false), 1);
  } else if (Object.hasOwn(parent, last)) {
    delete parent[last];
  } else {
    throw new PatchError(`path '${pointer}' does not exist`);
  }
  return doc;
}

/** RFC 6902, applied to a copy; any failing operation fails the whole patch. */
export function jsonPatch(target: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations)) {
    throw new PatchError('a JSON patch is an array of operations');
  }
  let doc = structuredClone(target);
  for (const raw of operations as Operation[]) {
    switch (raw.op) {
      case 'add':
        doc = add(doc, raw.path, raw.value);
        break;
      case 'remove':
        doc = remove(doc, raw.path);
        break;
      case 'replace':
        get(doc, raw.path);
        doc = raw.path === '' ? structuredClone(raw.value) : add(remove(doc, raw.path), raw.path, raw.value);
        break;
      case 'move': {
        const value = get(doc, raw.from ?? '');
        doc = add(remove(doc, raw.from ?? ''), raw.path, value);
        break;
      }
      case 'copy':
        doc = add(doc, raw.path, get(doc, raw.from ?? ''));
        break;
      case 'test':
        if (JSON.stringify(get(doc, raw.path)) !== JSON.stringify(raw.value)) {
          throw new PatchError(`test operation failed at '${raw.path}'`, true);
        }
        break;
      default:
        throw new PatchError(`unknown operation '${(raw as { op: string }).op}'`);
    }
  }
  return doc;
}
