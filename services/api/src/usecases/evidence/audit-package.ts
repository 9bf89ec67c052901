/**
 * Audit packages (spec endpoint 17, and per trail; semantics.md section 8): a streamed .tar.gz
 * holding the record and its compliance as JSON, every attestation and evidence file, and
 * `MANIFEST.sha256` with the sum of every other member (`sha256sum -c` checks it).
 */
import { createHash } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import tar from 'tar-stream';
import { bindAttestation } from '../../domain/compliance.js';
import {
  attestationsRepository,
  type AttestationRowWithNames,
} from '../../storage/repositories/attestations.js';
import type { ArtifactRowWithNames } from '../../storage/repositories/artifacts.js';
import { artifactsRepository } from '../../storage/repositories/artifacts.js';
import type { FlowRow } from '../../storage/repositories/flows.js';
import type { TrailRow } from '../../storage/repositories/trails.js';
import { trailsRepository } from '../../storage/repositories/trails.js';
import { presentAttestation } from './attestation-present.js';
import { presentArtifacts } from './artifact-present.js';
import { findArtifact } from './artifacts.js';
import type { OrgScope } from '../scope/org-scope.js';
import type { EvidenceStore, StoredEvidence } from '../scope/services.js';
import { resolveFlow } from './flows.js';
import { logMembers, type LogRef } from '../log/package.js';
import { presentTrail, trailNotFound } from './trails.js';

/** One file of a package. */
export interface Member {
  name: string;
  /** Content now, or a loader for evidence files (streamed one at a time, checked against their digest). */
  content: Buffer | (() => Promise<StoredEvidence | undefined>);
}

export const json = (value: unknown) => Buffer.from(`${JSON.stringify(value, null, 2)}\n`);
export const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100) || '_';

function attestationMembers(ctx: OrgScope, store: EvidenceStore, rows: AttestationRowWithNames[]): Member[] {
  const members: Member[] = [];
  rows.forEach((a, i) => {
    const dir = `attestations/${String(i + 1).padStart(3, '0')}-${safe(a.name)}`;
    members.push({ name: `${dir}/attestation.json`, content: json(presentAttestation(ctx, a)) });
    if (a.evidence_sha256) {
      const sha = a.evidence_sha256;
      members.push({
        name: `${dir}/evidence/${safe(a.evidence_filename ?? 'evidence')}`,
        content: () => store.get(ctx.db, ctx.org.id, sha),
      });
    }
  });
  return members;
}

/** Streams the members, then the manifest of their sums, as a gzipped tar. */
export function pack(members: Member[], mtime: Date): Readable {
  const out = new PassThrough();
  const archive = tar.pack();
  archive.on('error', (err) => out.destroy(err));
  archive
    .pipe(createGzip())
    .on('error', (err) => out.destroy(err))
    .pipe(out);
  void (async () => {
    const sums: string[] = [];
    for (const m of members) {
      if (typeof m.content !== 'function') {
        const content = m.content;
        sums.push(`${createHash('sha256').update(content).digest('hex')}  ${m.name}`);
        await new Promise<void>((resolve, reject) =>
          archive.entry({ name: m.name, size: content.length, mtime, mode: 0o644 }, content, (err) =>
            err ? reject(err) : resolve(),
          ),
        );
        continue;
      }
      const file = await m.content();
      if (!file) {
        continue;
      }
      // Streamed into the archive; a file whose bytes no longer match its digest fails the
      // package (the stream errs before its last chunk) rather than ship changed evidence.
      const hash = createHash('sha256');
      await new Promise<void>((resolve, reject) => {
        const entry = archive.entry({ name: m.name, size: file.size, mtime, mode: 0o644 }, (err) =>
          err ? reject(err) : resolve(),
        );
        file.stream.on('data', (chunk: Buffer) => hash.update(chunk));
        pipeline(file.stream, entry).catch(reject);
      });
      sums.push(`${hash.digest('hex')}  ${m.name}`);
    }
    archive.entry({ name: 'MANIFEST.sha256', mtime, mode: 0o644 }, `${sums.join('\n')}\n`);
    archive.finalize();
  })().catch((err: unknown) => out.destroy(err as Error));
  return out;
}

/** The transparency log's proofs of the records named (nothing while the log is off). */
export async function proofMembers(ctx: OrgScope, refs: LogRef[]): Promise<Member[]> {
  const settings = ctx.services.log;
  return settings ? logMembers(ctx.db, ctx.org, settings, ctx.now, refs) : [];
}

/**
 * The files of an artifact's audit package, each name under `dir` (empty for the package root):
 * its record, compliance, and its and its trail's attestations with their evidence files. The
 * log records they show (flow, trail, artifact, attestations) are added to `refs`.
 */
export async function artifactMembers(
  ctx: OrgScope,
  artifact: ArtifactRowWithNames,
  dir = '',
  refs: LogRef[] = [],
): Promise<Member[]> {
  const { store } = ctx.services;
  const [record] = await presentArtifacts(ctx, [artifact]);
  const [trail] = await trailsRepository.findByIds(ctx.db, ctx.org.id, [artifact.trail_id]);
  const siblings = await artifactsRepository.listForTrail(ctx.db, ctx.org.id, artifact.trail_id);
  const facts = siblings.map((a) => ({
    id: a.id,
    fingerprint: a.fingerprint,
    templateReferenceName: a.template_reference_name,
    gitCommit: a.git_commit,
    seq: Number(a.seq),
  }));
  const rows = (await attestationsRepository.listForTrail(ctx.db, ctx.org.id, artifact.trail_id)).filter(
    (a) => {
      const b = bindAttestation(
        {
          id: a.id,
          name: a.name,
          type: a.type,
          isCompliant: a.is_compliant,
          isOverride: a.kind === 'override',
          artifactFingerprint: a.artifact_fingerprint,
          targetArtifacts: a.target_artifacts,
          gitCommit: a.git_commit,
          seq: Number(a.seq),
        },
        facts,
      );
      return (
        b.scope === 'trail' || (b.scope === 'artifacts' && b.artifacts.some((x) => x.id === artifact.id))
      );
    },
  );
  refs.push(
    { kind: 'flow', id: artifact.flow_id },
    { kind: 'trail', id: artifact.trail_id },
    { kind: 'artifact', id: artifact.id },
    ...rows.map((a) => ({ kind: 'attestation', id: a.id })),
  );
  return [
    { name: 'artifact.json', content: json(record) },
    {
      name: 'compliance.json',
      content: json({
        state: artifact.state,
        artifact: artifact.compliance,
        trail: trail?.compliance ?? null,
      }),
    },
    ...attestationMembers(ctx, store, rows),
  ].map((m) => (dir ? { ...m, name: `${dir}/${m.name}` } : m));
}

/** The audit package of an artifact: its record, compliance, its and its trail's attestations. */
export async function artifactAuditPackage(ctx: OrgScope, artifact: ArtifactRowWithNames): Promise<Readable> {
  const refs: LogRef[] = [];
  const members = await artifactMembers(ctx, artifact, '', refs);
  return pack([...members, ...(await proofMembers(ctx, refs))], ctx.now);
}

/** The audit package of a trail: its record with events, compliance, artifacts and attestations. */
export async function trailAuditPackage(ctx: OrgScope, flow: FlowRow, trail: TrailRow): Promise<Readable> {
  const { store } = ctx.services;
  const record = await presentTrail(ctx, flow, trail, { events: 'all' });
  const artifacts = await artifactsRepository.listForTrail(ctx.db, ctx.org.id, trail.id);
  const records = await presentArtifacts(
    ctx,
    artifacts.map((a) => ({ ...a, trail_name: trail.name, flow_name: flow.name })),
  );
  const rows = await attestationsRepository.listForTrail(ctx.db, ctx.org.id, trail.id);
  return pack(
    [
      { name: 'trail.json', content: json(record) },
      { name: 'compliance.json', content: json(record.compliance_status) },
      ...records.map((r) => ({ name: `artifacts/${r.fingerprint}.json`, content: json(r) })),
      ...attestationMembers(ctx, store, rows),
      ...(await proofMembers(ctx, [
        { kind: 'flow', id: flow.id },
        { kind: 'trail', id: trail.id },
        ...artifacts.map((a) => ({ kind: 'artifact', id: a.id })),
        ...rows.map((a) => ({ kind: 'attestation', id: a.id })),
      ])),
    ],
    ctx.now,
  );
}

/** A package and the file name it is offered under. */
export interface AuditPackage {
  stream: Readable;
  fileName: string;
}

/** The audit package of an artifact named by its flow and fingerprint (or prefix). */
export async function namedArtifactAuditPackage(
  ctx: OrgScope,
  flowName: string,
  fingerprint: string,
): Promise<AuditPackage> {
  const flow = await resolveFlow(ctx, flowName);
  const artifact = await findArtifact(ctx, flow, fingerprint);
  return {
    stream: await artifactAuditPackage(ctx, artifact),
    fileName: `${flow.name}-${artifact.fingerprint.slice(0, 12)}-audit-package.tar.gz`,
  };
}

/** The audit package of a trail named by its flow and name. */
export async function namedTrailAuditPackage(
  ctx: OrgScope,
  flowName: string,
  trailName: string,
): Promise<AuditPackage> {
  const flow = await resolveFlow(ctx, flowName);
  const trail = await trailsRepository.find(ctx.db, ctx.org.id, flow.id, trailName);
  if (!trail) {
    throw trailNotFound(trailName, flow.name, ctx.org.name);
  }
  return {
    stream: await trailAuditPackage(ctx, flow, trail),
    fileName: `${flow.name}-${trail.name}-audit-package.tar.gz`,
  };
}
