/**
 * Kubernetes label selectors (`app=web,tier!=cache,env in (prod,staging),!canary`), parsed to
 * check a configuration before any watch starts: the API server would only reject a bad one
 * with a 400 at run time. The grammar is that of apimachinery's `labels.Parse`.
 */

export type LabelOperator = 'exists' | '!' | '=' | '!=' | 'in' | 'notin' | '>' | '<';

/** One requirement of a selector; all requirements must hold. */
export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function checkKey(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) {
    return `invalid label key prefix '${prefix}'`;
  }
  if (name.length === 0 || name.length > 63 || !NAME.test(name)) {
    return `invalid label key '${key}'`;
  }
  return undefined;
}

function checkValue(value: string): string | undefined {
  if (value.length > 63 || (value !== '' && !NAME.test(value))) {
    return `invalid label value '${value}'`;
  }
  return undefined;
}

// Tokens: identifiers (keys and values), operators and punctuation.
const TOKEN = /\s*(==|!=|=|!|>|<|\(|\)|,|[^\s=!<>(),]+)/y;

function tokenize(text: string): string[] | string {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    const start = TOKEN.lastIndex;
    const m = TOKEN.exec(text);
    if (!m) {
      if (/^\s*$/.test(text.slice(start))) {
        break;
      }
      return `unexpected character at position ${start}`;
    }
    tokens.push(m[1]!);
  }
  return tokens;
}

const isWord = (t: string | undefined): t is string =>
  t !== undefined && !/^(==|!=|=|!|>|<|\(|\)|,)$/.test(t);

/**
 * The values of `in (a, b)` / `notin (a, b)`, from the `(` at `start` to the `)`; `next` is the
 * token after it.
 */
function readValueSet(
  tokens: string[],
  start: number,
  label: string,
): { values: string[]; next: number } | { error: string } {
  let i = start;
  if (tokens[i] !== '(') {
    return { error: `expected '(' after '${label}'` };
  }
  i++;
  const values: string[] = [];
  for (;;) {
    const value = isWord(tokens[i]) ? tokens[i++]! : '';
    const valueProblem = checkValue(value);
    if (valueProblem) {
      return { error: valueProblem };
    }
    values.push(value);
    if (tokens[i] === ',') {
      i++;
      continue;
    }
    if (tokens[i] === ')') {
      return { values, next: i + 1 };
    }
    return { error: `expected ',' or ')' in the values of '${label}'` };
  }
}

/** Parses a label selector; returns its requirements or the reason it is invalid. */
export function parseLabelSelector(
  text: string,
): { ok: true; requirements: LabelRequirement[] } | { ok: false; error: string } {
  const tokens = tokenize(text);
  if (typeof tokens === 'string') {
    return { ok: false, error: tokens };
  }
  const requirements: LabelRequirement[] = [];
  let i = 0;
  const fail = (error: string) => ({ ok: false as const, error });
  while (i < tokens.length) {
    let negated = false;
    if (tokens[i] === '!') {
      negated = true;
      i++;
    }
    const key = tokens[i];
    if (!isWord(key)) {
      return fail(`expected a label key, got '${key ?? 'end of selector'}'`);
    }
    const keyProblem = checkKey(key);
    if (keyProblem) {
      return fail(keyProblem);
    }
    i++;
    const op = tokens[i];
    if (negated || op === undefined || op === ',') {
      requirements.push({ key, operator: negated ? '!' : 'exists', values: [] });
    } else if (op === '=' || op === '==' || op === '!=' || op === '>' || op === '<') {
      i++;
      // An empty value (`tier=`) is legal: the token after the operator is then a comma or nothing.
      const value = isWord(tokens[i]) ? tokens[i++]! : '';
      const valueProblem = checkValue(value);
      if (valueProblem) {
        return fail(valueProblem);
      }
      if ((op === '>' || op === '<') && !/^-?\d+$/.test(value)) {
        return fail(`'${key}${op}${value}': '${op}' needs an integer`);
      }
      requirements.push({ key, operator: op === '==' ? '=' : op, values: [value] });
    } else if (op === 'in' || op === 'notin') {
      const set = readValueSet(tokens, i + 1, `${key} ${op}`);
      if ('error' in set) {
        return fail(set.error);
      }
      i = set.next;
      requirements.push({ key, operator: op, values: set.values });
    } else {
      return fail(`unexpected '${op}' after label key '${key}'`);
    }
    if (negated && tokens[i] !== undefined && tokens[i] !== ',') {
      return fail(`unexpected '${tokens[i]}' after '!${key}'`);
    }
    if (i < tokens.length) {
      if (tokens[i] !== ',') {
        return fail(`expected ',' after the requirement on '${key}'`);
      }
      i++;
      if (i === tokens.length) {
        return fail('trailing comma');
      }
    }
  }
  return { ok: true, requirements };
}
