/** Compliance rules of semantics.md section 4, one table per rule (domain/compliance.ts). */
import { describe, expect, it } from 'vitest';
import {
  artifactState,
  bindAttestation,
  combineStates,
  effectiveOf,
  evaluateTrail,
  slotStatuses,
  type ArtifactFact,
  type AttestationFact,
} from '../../services/api/src/domain/compliance.js';
import { EMPTY_TEMPLATE, type FlowTemplate } from '../../services/api/src/domain/flow-template.js';

let seq = 0;
const att = (o: Partial<AttestationFact> & { name: string }): AttestationFact => ({
  id: `att-${++seq}`,
  type: 'generic',
  isCompliant: true,
  isOverride: false,
  artifactFingerprint: null,
  targetArtifacts: null,
  gitCommit: null,
  seq,
  ...o,
});
const FP1 = '1'.repeat(64);
const FP2 = '2'.repeat(64);
const C1 = 'c'.repeat(40);
const C2 = 'd'.repeat(40);
const art = (o: Partial<ArtifactFact> & { fingerprint: string }): ArtifactFact => ({
  id: `art-${o.fingerprint.slice(0, 4)}`,
  templateReferenceName: 'backend',
  gitCommit: C1,
  seq: ++seq,
  ...o,
});
const template: FlowTemplate = {
  version: 1,
  trail: {
    attestations: [{ name: 'pr', type: 'pull_request' }],
    artifacts: [{ name: 'backend', attestations: [{ name: 'unit', type: 'junit' }] }],
  },
};

describe('rule 4.1: latest report per slot wins', () => {
  it.each([
    { reports: [true, false], expected: false },
    { reports: [false, true], expected: true },
    { reports: [true], expected: true },
  ])('reports $reports give is_compliant $expected', ({ reports, expected }) => {
    const list = reports.map((c) => att({ name: 'x', isCompliant: c }));
    expect(slotStatuses([], list)[0]!.is_compliant).toBe(expected);
  });
});

describe('rule 4.2: an expected slot never reported is MISSING', () => {
  it.each([
    { reported: [], status: 'MISSING', isCompliant: null },
    { reported: ['unit'], status: 'COMPLETE', isCompliant: true },
  ])('reported $reported -> $status', ({ reported, status, isCompliant }) => {
    const s = slotStatuses(
      [{ name: 'unit', type: 'junit' }],
      reported.map((n) => att({ name: n })),
    );
    expect(s).toHaveLength(1);
    expect(s[0]).toMatchObject({ status, is_compliant: isCompliant, unexpected: false });
  });
});

describe('rule 4.3: names the template does not expect are unexpected and still count', () => {
  it.each([
    { name: 'extra', compliant: true, unexpected: true, state: 'COMPLIANT' },
    { name: 'extra', compliant: false, unexpected: true, state: 'NON-COMPLIANT' },
    { name: 'unit', compliant: true, unexpected: false, state: 'COMPLIANT' },
  ])('$name compliant=$compliant', ({ name, compliant, unexpected, state }) => {
    const s = slotStatuses(
      [{ name: 'unit', type: 'junit' }],
      [att({ name: 'unit' }), att({ name, isCompliant: compliant })],
    );
    expect(s.find((x) => x.attestation_name === name)!.unexpected).toBe(unexpected);
    expect(combineStates(s)).toBe(state);
  });
});

describe('rule 4.4: binding by fingerprint, or by template name and commit', () => {
  const artifacts = [art({ fingerprint: FP1, gitCommit: C1 })];
  it.each([
    { a: { artifactFingerprint: FP1 }, scope: 'artifacts' },
    { a: { artifactFingerprint: FP2 }, scope: 'unbound' },
    { a: { targetArtifacts: ['backend'], gitCommit: C1 }, scope: 'artifacts' },
    { a: { targetArtifacts: ['backend'], gitCommit: C2 }, scope: 'unbound' },
    { a: { targetArtifacts: ['frontend'], gitCommit: C1 }, scope: 'unbound' },
    { a: { targetArtifacts: ['backend'] }, scope: 'unbound' },
    { a: {}, scope: 'trail' },
  ])('$a binds to $scope', ({ a, scope }) => {
    expect(bindAttestation(att({ name: 'x', ...a }), artifacts).scope).toBe(scope);
  });

  it('binds a pending attestation once the artifact with that name and commit is reported', () => {
    const pending = att({ name: 'unit', targetArtifacts: ['backend'], gitCommit: C1 });
    const before = evaluateTrail({
      template,
      templateId: null,
      artifacts: [],
      attestations: [pending],
      evaluatedAt: 1,
    });
    expect(before.unbound_attestations).toHaveLength(1);
    expect(before.unbound_attestations[0]!.reason).toMatch(/pending/);
    const after = evaluateTrail({
      template,
      templateId: null,
      artifacts,
      attestations: [pending],
      evaluatedAt: 2,
    });
    expect(after.unbound_attestations).toHaveLength(0);
    expect(after.artifacts_statuses.backend!.attestations_statuses[0]).toMatchObject({ status: 'COMPLETE' });
  });

  it('binds to every rebuild with the same name and commit', () => {
    const rebuilds = [art({ fingerprint: FP1, id: 'a1' }), art({ fingerprint: FP2, id: 'a2' })];
    const e = evaluateTrail({
      template,
      templateId: null,
      artifacts: rebuilds,
      attestations: [att({ name: 'unit', targetArtifacts: ['backend'], gitCommit: C1 })],
      evaluatedAt: 1,
    });
    expect(e.byArtifactId.a1!.attestations_statuses[0]!.status).toBe('COMPLETE');
    expect(e.byArtifactId.a2!.attestations_statuses[0]!.status).toBe('COMPLETE');
  });
});

describe('rule 4.5: an override is the effective result and points to what it overrode', () => {
  it.each([
    { history: ['report:false', 'override:true'], compliant: true, overridesFirst: true },
    { history: ['override:false'], compliant: false, overridesFirst: false },
    { history: ['report:true', 'override:false', 'report:true'], compliant: true, overridesFirst: false },
  ])('$history', ({ history, compliant, overridesFirst }) => {
    const list = history.map((h) => {
      const [kind, value] = h.split(':');
      return att({ name: 'x', isOverride: kind === 'override', isCompliant: value === 'true' });
    });
    const { effective, overriddenId } = effectiveOf(list);
    expect(effective.isCompliant).toBe(compliant);
    expect(overriddenId).toBe(overridesFirst ? list[0]!.id : null);
  });
});

describe('rule 4.6: artifact state NON-COMPLIANT > INCOMPLETE > COMPLIANT, trail-level slots included', () => {
  it.each([
    { trail: [], artifact: [], state: 'INCOMPLETE' },
    { trail: ['pr:true'], artifact: [], state: 'INCOMPLETE' },
    { trail: [], artifact: ['unit:false'], state: 'NON-COMPLIANT' },
    { trail: ['pr:false'], artifact: ['unit:true'], state: 'NON-COMPLIANT' },
    { trail: ['pr:true'], artifact: ['unit:true'], state: 'COMPLIANT' },
    { trail: ['pr:true'], artifact: ['unit:true', 'extra:false'], state: 'NON-COMPLIANT' },
  ])('trail $trail artifact $artifact -> $state', ({ trail, artifact, state }) => {
    const a = art({ fingerprint: FP1 });
    const reports = [
      ...trail.map((t) => att({ name: t.split(':')[0]!, isCompliant: t.endsWith('true') })),
      ...artifact.map((t) =>
        att({ name: t.split(':')[0]!, isCompliant: t.endsWith('true'), artifactFingerprint: FP1 }),
      ),
    ];
    const e = evaluateTrail({
      template,
      templateId: null,
      artifacts: [a],
      attestations: reports,
      evaluatedAt: 1,
    });
    expect(e.byArtifactId[a.id]!.status).toBe(state);
  });
});

describe('rule 4.6: an artifact evaluated as MISSING shows the state INCOMPLETE', () => {
  it.each([
    { status: 'MISSING', state: 'INCOMPLETE' },
    { status: undefined, state: 'INCOMPLETE' },
    { status: 'INCOMPLETE', state: 'INCOMPLETE' },
    { status: 'NON-COMPLIANT', state: 'NON-COMPLIANT' },
    { status: 'COMPLIANT', state: 'COMPLIANT' },
  ] as const)('$status -> $state', ({ status, state }) => {
    expect(artifactState(status)).toBe(state);
  });
});

describe('rule 4.7: trail state over trail slots and every expected artifact', () => {
  it.each([
    { artifacts: [], reports: ['pr:true'], state: 'INCOMPLETE', backend: 'MISSING' },
    { artifacts: [FP1], reports: ['pr:true', 'unit:true'], state: 'COMPLIANT', backend: 'COMPLIANT' },
    { artifacts: [FP1], reports: ['pr:true'], state: 'INCOMPLETE', backend: 'INCOMPLETE' },
    { artifacts: [], reports: ['pr:false'], state: 'NON-COMPLIANT', backend: 'MISSING' },
  ])('$artifacts $reports -> $state', ({ artifacts, reports, state, backend }) => {
    const e = evaluateTrail({
      template,
      templateId: 't1',
      artifacts: artifacts.map((fp) => art({ fingerprint: fp })),
      attestations: reports.map((r) => {
        const [name, v] = r.split(':');
        return att({
          name: name!,
          isCompliant: v === 'true',
          ...(name === 'unit' ? { artifactFingerprint: FP1 } : {}),
        });
      }),
      evaluatedAt: 1,
    });
    expect(e.status).toBe(state);
    expect(e.is_compliant).toBe(state === 'COMPLIANT');
    expect(e.artifacts_statuses.backend!.status).toBe(backend);
    if (backend === 'MISSING') {
      expect(e.artifacts_statuses.backend).toMatchObject({ artifact_fingerprint: null, is_compliant: null });
    }
  });
});

describe('rule 4.8: without a template nothing is MISSING; the AND of what was reported', () => {
  it.each([
    { reports: [], state: 'COMPLIANT' },
    { reports: [true, true], state: 'COMPLIANT' },
    { reports: [true, false], state: 'NON-COMPLIANT' },
  ])('$reports -> $state', ({ reports, state }) => {
    const a = art({ fingerprint: FP1, templateReferenceName: 'runner' });
    const e = evaluateTrail({
      template: EMPTY_TEMPLATE,
      templateId: null,
      artifacts: [a],
      attestations: reports.map((c, i) => att({ name: `a${i}`, isCompliant: c, artifactFingerprint: FP1 })),
      evaluatedAt: 1,
    });
    expect(e.status).toBe(state);
    expect(e.artifacts_statuses.runner!.unexpected).toBe(true);
    expect(e.artifacts_statuses.runner!.attestations_statuses.every((s) => s.unexpected)).toBe(true);
  });
});
