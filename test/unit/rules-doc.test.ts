/**
 * docs/rules.md stays true: every function it names exists in its file, every test title it
 * quotes is in its test file, and every rule cited in the code or a test title has a row there.
 * Pure file reads.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const DOC = 'docs/rules.md';

interface Row {
  id: string;
  functions: Array<{ file: string; name: string | null }>;
  tests: Array<{ file: string; title: string }>;
  noTest: boolean;
}

/** The table rows of the rules document: rule id, functions (`path#name`), tests (`file` "title"). */
function parseRules(text: string): Row[] {
  const rows: Row[] = [];
  for (const line of text.split('\n')) {
    const cells = line.split(' | ').map((c) => c.replace(/^\|\s*|\s*\|$/g, '').trim());
    if (cells.length !== 4 || cells[0] === 'Rule' || /^-+$/.test(cells[0]!)) {
      continue;
    }
    const [idCell, , fnCell, testCell] = cells as [string, string, string, string];
    rows.push({
      id: idCell.replace(/\s*\(.*\)$/, ''),
      functions: [...fnCell.matchAll(/`([^`#\s]+\.tsx?)(?:#([A-Za-z_$][\w$]*))?`/g)].map((m) => ({
        file: m[1]!,
        name: m[2] ?? null,
      })),
      tests: [...testCell.matchAll(/`(test\/[^`]+\.test\.ts)`\s+"([^"]+)"/g)].map((m) => ({
        file: m[1]!,
        title: m[2]!,
      })),
      noTest: testCell === 'no test',
    });
  }
  return rows;
}

/** What is wrong with the rows against the files under `root`, one line per problem. */
function rowProblems(rows: readonly Row[], read: (file: string) => string | undefined): string[] {
  const problems: string[] = [];
  for (const row of rows) {
    if (row.functions.length === 0) {
      problems.push(`${row.id}: names no function`);
    }
    if (row.tests.length === 0 && !row.noTest) {
      problems.push(`${row.id}: names no test and does not say "no test"`);
    }
    for (const { file, name } of row.functions) {
      const text = read(file);
      if (text === undefined) {
        problems.push(`${row.id}: ${file} does not exist`);
        continue;
      }
      const defined = new RegExp(
        `(?:export\\s+(?:async\\s+)?function|export\\s+const|function)\\s+${name}\\b`,
      );
      if (name !== null && !defined.test(text)) {
        problems.push(`${row.id}: ${file} defines no function ${name}`);
      }
    }
    for (const { file, title } of row.tests) {
      const text = read(file);
      if (text === undefined) {
        problems.push(`${row.id}: ${file} does not exist`);
      } else if (!text.includes(title)) {
        problems.push(`${row.id}: ${file} has no test titled "${title}"`);
      }
    }
  }
  return problems;
}

/** Expands "2-4", "3 and 4", "4.1-4.3", "4.1, 4.3" into single numbers. */
function expandNumbers(list: string): string[] {
  const out: string[] = [];
  const parts = list.split(/\s*(?:,|\band\b|\bor\b)\s*/).filter((p) => p !== '');
  for (const part of parts) {
    const range = /^(\d+)(?:\.(\d+))?\s*(?:-|to)\s*(\d+)(?:\.(\d+))?$/.exec(part);
    if (!range) {
      out.push(part.trim());
      continue;
    }
    const [, a, aMinor, b, bMinor] = range;
    if (aMinor !== undefined && bMinor !== undefined && a === b) {
      for (let i = Number(aMinor); i <= Number(bMinor); i++) {
        out.push(`${a}.${i}`);
      }
    } else if (aMinor === undefined && bMinor === undefined) {
      for (let i = Number(a); i <= Number(b); i++) {
        out.push(String(i));
      }
    } else {
      out.push(`${a}${aMinor ? `.${aMinor}` : ''}`, `${b}${bMinor ? `.${bMinor}` : ''}`);
    }
  }
  return out;
}

const NUMBER_LIST = String.raw`\d+(?:\.\d+)?(?:\s*(?:,|and|or|-|to)\s*\d+(?:\.\d+)?)*`;

/** The rule ids a text cites: "rule 2" / "spec rules 2-4" (spec N), "rule 4.6", "section 5". */
function citedRules(text: string): string[] {
  const ids: string[] = [];
  for (const m of text.matchAll(new RegExp(String.raw`\b(?:spec\s+)?rules?\s+(${NUMBER_LIST})`, 'gi'))) {
    for (const n of expandNumbers(m[1]!)) {
      ids.push(n.includes('.') ? n : `spec ${n}`);
    }
  }
  // "section N" of semantics.md; a section of another document names that document first.
  for (const m of text.matchAll(/(?:([\w./-]+\.md)\s+)?\bsections?\s+(\d+)/gi)) {
    if (m[1] === undefined || basename(m[1]) === 'semantics.md') {
      ids.push(`section ${m[2]}`);
    }
  }
  return ids;
}

function hasRule(ids: ReadonlySet<string>, cited: string): boolean {
  if (cited.startsWith('section ')) {
    const n = cited.slice('section '.length);
    return [...ids].some((id) => id.startsWith(`${n}.`));
  }
  return ids.has(cited);
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist' && entry.name !== 'migrations') {
        out.push(...sourceFiles(path));
      }
    } else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
      out.push(path);
    }
  }
  return out;
}

const readRepoFile = (file: string): string | undefined =>
  existsSync(join(ROOT, file)) ? readFileSync(join(ROOT, file), 'utf8') : undefined;

describe('docs/rules.md', () => {
  const rows = parseRules(readFileSync(join(ROOT, DOC), 'utf8'));
  const ids = new Set(rows.map((r) => r.id));

  it('has a row for the interface rules 1-4 and every section of semantics.md', () => {
    expect(rows.length).toBeGreaterThan(40);
    for (const id of [
      'spec 1',
      'spec 2',
      'spec 3',
      'spec 4',
      ...[1, 2, 3, 4, 5, 6, 7, 8].map((s) => `${s}.1`),
    ]) {
      expect(ids, id).toContain(id);
    }
  });

  it('names functions that exist in the named files, and test titles found in the named test files', () => {
    expect(rowProblems(rows, readRepoFile)).toEqual([]);
  });

  it('has a row for every rule cited in a code comment or a test title', () => {
    const files = [...sourceFiles('services'), ...sourceFiles('test')].filter(
      (f) => !f.endsWith('rules-doc.test.ts'),
    );
    const missing: string[] = [];
    for (const file of files) {
      for (const cited of citedRules(readFileSync(join(ROOT, file), 'utf8'))) {
        if (!hasRule(ids, cited)) {
          missing.push(`${relative(ROOT, join(ROOT, file))}: ${cited}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('the rules-doc checks themselves', () => {
  const doc = [
    '| Rule | In short | Function | Test |',
    '| --- | --- | --- | --- |',
    '| spec 9 | x | `a.ts#gone` | `test/unit/t.test.ts` "a title not there" |',
    '| 9.1 | x | `a.ts#here` | no test |',
  ].join('\n');
  const files: Record<string, string> = {
    'a.ts': 'export function here() {}',
    'test/unit/t.test.ts': "it('another title')",
  };

  it('reports a function that no longer exists and a test title that is not found', () => {
    expect(rowProblems(parseRules(doc), (f) => files[f])).toEqual([
      'spec 9: a.ts defines no function gone',
      'spec 9: test/unit/t.test.ts has no test titled "a title not there"',
    ]);
  });

  it('reads rule numbers as code and test titles cite them', () => {
    expect(
      citedRules('spec rules 2-4; Rules 4.1-4.3; rules 3 and 4; rule 4.6; semantics.md section 5'),
    ).toEqual(['spec 2', 'spec 3', 'spec 4', '4.1', '4.2', '4.3', 'spec 3', 'spec 4', '4.6', 'section 5']);
    expect(citedRules('payload version 1.0 (reference: kosli-semantics.md section 11)')).toEqual([]);
    const ids = new Set(parseRules(doc).map((r) => r.id));
    expect(hasRule(ids, 'section 9')).toBe(true);
    expect(hasRule(ids, 'section 7')).toBe(false);
    expect(hasRule(ids, 'spec 9')).toBe(true);
  });
});
