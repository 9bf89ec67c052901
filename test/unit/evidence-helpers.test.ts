/** Fingerprint prefixes, runtime places and flow templates (semantics.md sections 3 and 5). */
import { describe, expect, it } from 'vitest';
import { resolveFingerprintPrefix } from '../../services/api/src/domain/fingerprint-prefix.js';
import { runtimePlaces } from '../../services/api/src/domain/runtime-status.js';
import { parseFlowTemplate } from '../../services/api/src/domain/flow-template.js';

describe('fingerprint prefix: one match answers, several are ambiguous, none is none', () => {
  const a = 'abcde'.padEnd(64, '1');
  const b = 'abcdf'.padEnd(64, '2');
  it.each([
    { prefix: 'abcde', matches: [a], kind: 'one' },
    { prefix: 'abcd', matches: [a, b], kind: 'ambiguous' },
    { prefix: 'fffff', matches: [], kind: 'none' },
    { prefix: a, matches: [a], kind: 'one' },
    { prefix: 'abcde', matches: [a, a], kind: 'one' },
  ])('$prefix -> $kind', ({ prefix, matches, kind }) => {
    expect(resolveFingerprintPrefix(prefix, matches).kind).toBe(kind);
  });
});

describe('runtime places: the last event per environment decides', () => {
  const ev = (type: string, env: string, idx: number, seq: number) => ({
    type: `artifact_${type}_running`,
    environmentName: env,
    snapshotIndex: idx,
    seq,
  });
  it.each([
    { events: [ev('started', 'prod', 1, 1)], running: ['prod#1'], exited: [] },
    { events: [ev('started', 'prod', 1, 1), ev('stopped', 'prod', 2, 2)], running: [], exited: ['prod#2'] },
    {
      events: [
        ev('started', 'prod', 1, 1),
        ev('stopped', 'prod', 2, 2),
        ev('started', 'prod', 5, 3),
        ev('started', 'beta', 7, 4),
      ],
      running: ['beta#7', 'prod#5'],
      exited: [],
    },
  ])('$running / $exited', ({ events, running, exited }) => {
    const p = runtimePlaces(events);
    expect(p.running.map((r) => `${r.environment_name}#${r.snapshot_index}`)).toEqual(running);
    expect(p.exited.map((r) => `${r.environment_name}#${r.snapshot_index}`)).toEqual(exited);
  });
});

describe('flow templates: the v1 schema, with the line of each problem', () => {
  it.each([
    { yaml: 'version: 1\n', ok: true, line: 0 },
    {
      yaml: 'version: 1\ntrail:\n  attestations:\n  - name: foo\n    type: not-supported\n',
      ok: false,
      line: 5,
    },
    { yaml: 'version: 2\n', ok: false, line: 1 },
    { yaml: 'version: 1\ntrail:\n  bogus: 1\n', ok: false, line: 3 },
    { yaml: 'version: 1\ntrail:\n  artifacts:\n  - name: a\n  - name: a\n', ok: false, line: 5 },
    { yaml: 'version: 1\ntrail: [\n', ok: false, line: 3 },
    {
      yaml: 'version: 1\ntrail:\n  attestations:\n  - name: x\n    type: custom:metrics\n  - name: y\n    type: "*"\n',
      ok: true,
      line: 0,
    },
  ])('%#', ({ yaml, ok, line }) => {
    const r = parseFlowTemplate(yaml);
    expect(r.ok).toBe(ok);
    if (!r.ok) {
      expect(r.problems[0]).toMatch(new RegExp(`^line ${line}:`));
    }
  });

  it('names the unsupported attestation type', () => {
    const r = parseFlowTemplate(
      'version: 1\ntrail:\n  attestations:\n  - name: foo\n    type: not-supported\n',
    );
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.problems.join()).toMatch(/'not-supported' is not supported/);
    }
  });
});
