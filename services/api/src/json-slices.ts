/**
 * JSON.parse of a large report in slices. A K8S report at the body limit is a 10 MiB object whose
 * bulk is one array (`artifacts`); JSON.parse of it is one block of 100 to 250 ms on a slow core,
 * every other request waiting. Here the text is scanned for that array's elements in chunks, and
 * the elements are parsed by JSON.parse a slice at a time, yielding between chunks and slices.
 *
 * The result is JSON.parse's: anything the scan does not recognise (no such array, the key
 * twice, a top-level member name written with escapes, text that is not JSON) is parsed in one
 * piece by JSON.parse instead, which also gives its usual error for malformed text.
 */
import type { Steps } from './slices.js';

/** Characters scanned between two yields. */
const SCAN_CHARS = 512 * 1024;
/** Array elements one JSON.parse call takes. */
const SLICE_ELEMENTS = 2_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Where the array of `key` lies in `text`: its brackets and the commas between its elements. */
interface ArraySpan {
  open: number;
  close: number;
  commas: number[];
}

/** The index after the string that opens at `start` (a quote), or -1 when it never closes. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  for (;;) {
    const quote = text.indexOf('"', i);
    if (quote < 0) {
      return -1;
    }
    // A quote preceded by an odd number of backslashes is escaped.
    let slashes = 0;
    for (let j = quote - 1; j > start && text.charCodeAt(j) === BACKSLASH; j -= 1) {
      slashes += 1;
    }
    if (slashes % 2 === 0) {
      return quote + 1;
    }
    i = quote + 1;
  }
}

/** Whether the string between `start` and `end` holds a backslash (linear in the string alone). */
function hasEscape(text: string, start: number, end: number): boolean {
  for (let j = start + 1; j < end - 1; j += 1) {
    if (text.charCodeAt(j) === BACKSLASH) {
      return true;
    }
  }
  return false;
}

/** The first character at or after `i` that is not JSON whitespace. */
function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) {
    i += 1;
  }
  return i;
}

/**
 * The span of the top-level object's array member `key`, scanned SCAN_CHARS at a time; undefined
 * when the text is not an object holding that array exactly once (or is not well formed).
 */
function* arraySpan(text: string, key: string): Steps<ArraySpan | undefined> {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== OPEN_BRACE) {
    return undefined;
  }
  const quotedKey = `"${key}"`;
  let depth = 0;
  let span: ArraySpan | undefined;
  let inArray = false;
  let nextYield = SCAN_CHARS;
  // Each step moves i forward: the scan is linear in the text.
  while (i < text.length) {
    if (i >= nextYield) {
      nextYield = i + SCAN_CHARS;
      yield;
    }
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end < 0) {
        return undefined;
      }
      // A member name with an escape may be `key` in disguise: JSON.parse would decide which of
      // the two wins, so the whole text goes to JSON.parse.
      if (depth === 1 && hasEscape(text, i, end) && text.charCodeAt(skipSpace(text, end)) === COLON) {
        return undefined;
      }
      if (depth === 1 && end - i === quotedKey.length && text.startsWith(quotedKey, i)) {
        const colon = skipSpace(text, end);
        if (text.charCodeAt(colon) === COLON) {
          const value = skipSpace(text, colon + 1);
          if (span || text.charCodeAt(value) !== OPEN_BRACKET) {
            return undefined;
          }
          span = { open: value, close: -1, commas: [] };
          inArray = true;
          depth = 2;
          i = value + 1;
          continue;
        }
      }
      i = end;
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth += 1;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth -= 1;
      if (inArray && depth === 1) {
        if (c !== CLOSE_BRACKET) {
          return undefined;
        }
        span!.close = i;
        inArray = false;
      }
      if (depth === 0) {
        return span && span.close >= 0 && skipSpace(text, i + 1) === text.length ? span : undefined;
      }
      if (depth < 0) {
        return undefined;
      }
    } else if (c === COMMA && inArray && depth === 2) {
      span!.commas.push(i);
    }
    i += 1;
  }
  return undefined;
}

/**
 * JSON.parse(text) as steps: the elements of the top-level array member `key` are found and
 * parsed in slices. Throws JSON.parse's SyntaxError for text that is not JSON.
 */
export function* parseJsonSteps(text: string, key: string): Steps<unknown> {
  const span = yield* arraySpan(text, key);
  if (!span) {
    return JSON.parse(text) as unknown;
  }
  const elements: unknown[] = [];
  const bounds = [span.open, ...span.commas, span.close];
  const empty = span.commas.length === 0 && text.slice(span.open + 1, span.close).trim() === '';
  try {
    // Bounded by the elements: each slice parses SLICE_ELEMENTS of them once.
    for (let k = 0; !empty && k < bounds.length - 1; k += SLICE_ELEMENTS) {
      const last = Math.min(k + SLICE_ELEMENTS, bounds.length - 1);
      const part = JSON.parse(`[${text.slice(bounds[k]! + 1, bounds[last])}]`) as unknown[];
      if (part.length !== last - k) {
        return JSON.parse(text) as unknown;
      }
      for (const e of part) {
        elements.push(e);
      }
      yield;
    }
    const envelope = JSON.parse(`${text.slice(0, span.open)}[]${text.slice(span.close + 1)}`) as Record<
      string,
      unknown
    >;
    envelope[key] = elements;
    return envelope;
  } catch {
    // Not JSON after all: JSON.parse of the whole text gives its usual error.
    return JSON.parse(text) as unknown;
  }
}
