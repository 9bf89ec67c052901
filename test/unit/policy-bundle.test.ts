/**
 * Policy bundles of server-side evaluations (reference/peers-2026-11b.md 1.1): the checks on the
 * files sent, Rego detection, the CEL entry, and the canonical text behind the bundle digest.
 */
import { describe, expect, it } from 'vitest';
import {
  bundleProblem,
  canonicalBundle,
  canonicalJson,
  pathProblem,
  policyEntry,
  regoFiles,
  utf8Length,
} from '../../services/api/src/domain/policy-bundle.js';

describe('utf8Length', () => {
  it.each([
    ['', 0],
    ['abc', 3],
    ['é', 2],
    ['€', 3],
    ['😀', 4],
    ['a😀é', 7],
  ])('%j is %i bytes', (text, n) => {
    expect(utf8Length(text)).toBe(n);
    expect(utf8Length(text)).toBe(Buffer.byteLength(text));
  });
});

describe('pathProblem', () => {
  it.each([
    ['policy.cel', null],
    ['lib/rules/a.cel', null],
    ['a..b.cel', null],
    ['', 'a file path is empty'],
    ['/abs.cel', "file path '/abs.cel' is absolute; paths are relative to the bundle"],
    ['\\abs.cel', "file path '\\abs.cel' is absolute; paths are relative to the bundle"],
    ['C:/x.cel', "file path 'C:/x.cel' is absolute; paths are relative to the bundle"],
    ['../x.cel', "file path '../x.cel' contains '..'"],
    ['a/../x.cel', "file path 'a/../x.cel' contains '..'"],
    ['a\\..\\x.cel', "file path 'a\\..\\x.cel' contains '..'"],
  ])('%j: %s', (path, problem) => {
    expect(pathProblem(path)).toBe(problem);
  });
});

describe('bundleProblem', () => {
  it('counts the bytes of paths and sources, and names the limit', () => {
    expect(bundleProblem({ 'policy.cel': 'x'.repeat(1_048_566) })).toBeNull();
    expect(bundleProblem({ 'policy.cel': 'x'.repeat(1_048_567) })).toEqual({
      message: 'policy bundle is 1048577 bytes, over the 1048576 byte limit',
      field: 'body.policy.files',
    });
    // Multi-byte characters count as their UTF-8 bytes: 10 + 3 x 349,522 is the limit exactly.
    expect(bundleProblem({ 'policy.cel': '€'.repeat(349_522) })).toBeNull();
    expect(bundleProblem({ 'policy.cel': '€'.repeat(349_523) })?.message).toBe(
      'policy bundle is 1048579 bytes, over the 1048576 byte limit',
    );
  });

  it('holds 1 to 100 files', () => {
    expect(bundleProblem({})?.message).toBe('policy bundle holds no files; send 1 to 100');
    const hundred = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`${i}.cel`, 'true']));
    expect(bundleProblem(hundred)).toBeNull();
    expect(bundleProblem({ ...hundred, 'x.cel': 'true' })?.message).toBe(
      'policy bundle holds 101 files, over the 100 file limit',
    );
  });

  it('names the path of a bad file', () => {
    expect(bundleProblem({ 'ok.cel': 'true', '../up.cel': 'true' })).toEqual({
      message: "file path '../up.cel' contains '..'",
      field: 'body.policy.files.../up.cel',
    });
  });
});

describe('regoFiles', () => {
  it.each([
    [{ 'policy.cel': 'true' }, []],
    [{ 'policy.rego': 'anything' }, ['policy.rego']],
    [{ 'POLICY.REGO': 'x' }, ['POLICY.REGO']],
    [{ policy: 'package policy\n\nallow := true\n' }, ['policy']],
    [{ p: '# METADATA\n# entrypoint: true\n\npackage a.b\nallow := true' }, ['p']],
    [{ 'p.cel': 'input.package == "x"' }, []],
    [{ 'b.rego': 'x', 'a.rego': 'x', 'c.cel': 'true' }, ['a.rego', 'b.rego']],
  ])('%j: %j', (files, rego) => {
    expect(regoFiles(files as Record<string, string>)).toEqual(rego);
  });
});

describe('policyEntry', () => {
  it.each([
    [{ 'anything.txt': 'true' }, 'anything.txt'],
    [{ 'policy.cel': 'true', 'lib.cel': 'x' }, 'policy.cel'],
    [{ 'a.cel': 'true', 'b.cel': 'x' }, null],
    [{ 'sub/policy.cel': 'true', 'b.cel': 'x' }, null],
  ])('%j: %s', (files, entry) => {
    expect(policyEntry(files as Record<string, string>)).toBe(entry);
  });
});

describe('canonicalJson', () => {
  it('orders keys at every depth and leaves arrays in order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('gives one text for the same files whatever their order', () => {
    expect(canonicalBundle({ 'b.cel': 'x', 'policy.cel': 'y' })).toBe(
      canonicalBundle({ 'policy.cel': 'y', 'b.cel': 'x' }),
    );
    expect(canonicalBundle({ 'policy.cel': 'y' })).not.toBe(canonicalBundle({ 'policy.cel': 'y ' }));
  });
});
