/** The lexer of the policy expression language: text to tokens (see policy-expression.ts). */

/** A parse failure with the column (1-based) where it was found. */
export class ExpressionError extends Error {
  constructor(
    message: string,
    readonly column: number,
  ) {
    super(`${message} (at column ${column})`);
    this.name = 'ExpressionError';
  }
}

export type Token =
  | { kind: 'string'; value: string; pos: number }
  | { kind: 'number'; value: number; pos: number }
  | { kind: 'word'; value: string; pos: number }
  | { kind: 'op'; value: string; pos: number }
  | { kind: 'end'; pos: number };

const WORD = /[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_][A-Za-z0-9_-]*)*/y;
const NUMBER = /-?\d+(?:\.\d+)?/y;

/** The tokens of an expression; throws ExpressionError at the first character it cannot read. */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      let value = '';
      let j = i + 1;
      for (; j < text.length && text[j] !== c; j++) {
        if (text[j] === '\\' && j + 1 < text.length) {
          const next = text[++j]!;
          value += next === 'n' ? '\n' : next === 't' ? '\t' : next;
        } else {
          value += text[j];
        }
      }
      if (j >= text.length) {
        throw new ExpressionError('unterminated string', i + 1);
      }
      tokens.push({ kind: 'string', value, pos: i });
      i = j + 1;
      continue;
    }
    const two = text.slice(i, i + 2);
    if (['==', '!=', '<=', '>='].includes(two)) {
      tokens.push({ kind: 'op', value: two, pos: i });
      i += 2;
      continue;
    }
    if ('<>()[],'.includes(c)) {
      tokens.push({ kind: 'op', value: c, pos: i });
      i++;
      continue;
    }
    NUMBER.lastIndex = i;
    const num = NUMBER.exec(text);
    if (num && (c !== '-' || /\d/.test(text[i + 1] ?? ''))) {
      tokens.push({ kind: 'number', value: Number(num[0]), pos: i });
      i += num[0].length;
      continue;
    }
    WORD.lastIndex = i;
    const word = WORD.exec(text);
    if (word) {
      tokens.push({ kind: 'word', value: word[0], pos: i });
      i += word[0].length;
      continue;
    }
    throw new ExpressionError(`unexpected character '${c}'`, i + 1);
  }
  tokens.push({ kind: 'end', pos: text.length });
  return tokens;
}
