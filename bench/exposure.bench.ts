/**
 * Exposure at scale on PostgreSQL. Seeded in SQL (not through the API): 10,000 artifacts, each
 * in its own trail with an SBOM attestation of 200 components (2,000,000 component rows over
 * 10,000 package names in 4 versions), and 50 environments of 1,000 snapshots each in which the
 * artifacts ran (runs of 20-100 snapshots, a tenth still running) while the environments'
 * compliance changed every 50 snapshots. Then `GET /exposure/{org}` by package (with and without
 * a version, with a time window) and by fingerprint, p99 over varied queries; and the time a
 * 5,000-component SBOM adds to its attestation, against the same attestation with a file of the
 * same size that is no SBOM. Server time is measured in process (`inject`), next to a baseline
 * request of the same run (a single-row indexed read).
 *
 * BENCH_EXPOSURE_ARTIFACTS scales the seed down (components per artifact and environments stay).
 */
import { sql } from 'kysely';
import type { Db } from '../services/api/src/storage/database.js';
import type { BenchContext, BenchFigure } from './harness.js';
import { startApi } from './harness.js';

const ARTIFACTS = Number(process.env.BENCH_EXPOSURE_ARTIFACTS ?? 10_000);
const COMPONENTS = 200;
const NAMES = 10_000;
const ENVIRONMENTS = 50;
const SNAPSHOTS = 1_000;
const SBOM_COMPONENTS = 5_000;

const percentile = (values: number[], p: number) => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const median = (values: number[]) => percentile(values, 50);

export default async function run(ctx: BenchContext): Promise<BenchFigure[]> {
  const api = await startApi({ postgres: true });
  try {
    const headers = { authorization: `Bearer ${api.key}` };
    const call = async (method: 'GET' | 'POST', url: string, body?: { payload: Buffer; type: string }) => {
      const start = process.hrtime.bigint();
      const res = await api.app.inject({
        method,
        url,
        headers: { ...headers, ...(body ? { 'content-type': body.type } : {}) },
        ...(body ? { payload: body.payload } : {}),
      });
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (res.statusCode >= 300) {
        throw new Error(`${method} ${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
      }
      return { ms, body: res.body };
    };
    const db = api.db.db;
    const org = (
      await db.selectFrom('orgs').select('id').where('name', '=', api.org).executeTakeFirstOrThrow()
    ).id;

    const seedStart = Date.now();
    await seed(db, org);
    await sql`vacuum analyze`.execute(db);
    ctx.log(
      `seeded ${ARTIFACTS} artifacts x ${COMPONENTS} components, ${ENVIRONMENTS} environments x ${SNAPSHOTS} snapshots in ${((Date.now() - seedStart) / 1000).toFixed(0)} s`,
    );

    // Baseline: a single-row indexed read through the same stack, in the same run.
    const baselineUrl = `/api/v2/environments/${api.org}/env-1`;
    for (let i = 0; i < 20; i++) {
      await call('GET', baselineUrl);
    }
    const baselineRuns: number[] = [];
    for (let i = 0; i < 50; i++) {
      baselineRuns.push((await call('GET', baselineUrl)).ms);
    }
    const baseline = median(baselineRuns);
    ctx.log(`baseline GET environment: ${baseline.toFixed(2)} ms`);

    const fingerprintOf = async (i: number) =>
      (
        await sql<{
          fp: string;
        }>`select encode(sha256(convert_to(${`artifact ${i}`}, 'UTF8')), 'hex') as fp`.execute(db)
      ).rows[0]!.fp;
    const t0 = Date.parse('2026-01-01T00:00:00Z') / 1000;
    const queries: Array<{ kind: string; url: () => Promise<string> }> = [
      { kind: 'purl, any version', url: async () => `purl=pkg:npm/pkg-${rand(NAMES)}` },
      { kind: 'purl@version', url: async () => `purl=pkg:npm/pkg-${rand(NAMES)}%401.${rand(4)}.0` },
      {
        kind: 'purl, any version, from/to',
        url: async () => `purl=pkg:npm/pkg-${rand(NAMES)}&from=${t0 + 200 * 60}&to=${t0 + 600 * 60}`,
      },
      { kind: 'fingerprint', url: async () => `fingerprint=${await fingerprintOf(rand(ARTIFACTS))}` },
    ];
    const runs: number[] = [];
    const byKind = new Map<string, number[]>();
    let matched = 0;
    let intervals = 0;
    for (let i = 0; i < 40; i++) {
      await call('GET', `/api/v2/exposure/${api.org}?${await queries[i % 4]!.url()}`);
    }
    for (let i = 0; i < 400; i++) {
      const q = queries[i % queries.length]!;
      const url = `/api/v2/exposure/${api.org}?${await q.url()}`;
      const res = await call('GET', url);
      runs.push(res.ms);
      byKind.set(q.kind, [...(byKind.get(q.kind) ?? []), res.ms]);
      const body = JSON.parse(res.body) as {
        artifacts: Array<{ environments: Array<{ intervals: unknown[] }> }>;
      };
      matched += body.artifacts.length;
      intervals += body.artifacts.reduce(
        (n, a) => n + a.environments.reduce((m, e) => m + e.intervals.length, 0),
        0,
      );
    }
    for (const [kind, ms] of byKind) {
      ctx.log(
        `exposure by ${kind}: p50 ${median(ms).toFixed(1)} ms, p99 ${percentile(ms, 99).toFixed(1)} ms`,
      );
    }
    ctx.log(
      `answers held ${(matched / runs.length).toFixed(0)} artifacts and ${(intervals / runs.length).toFixed(0)} intervals on average`,
    );
    const p99 = percentile(runs, 99);

    // Indexing cost: the same attestation with a 5,000-component CycloneDX file, or with a file
    // of the same size that is no SBOM.
    const bom = JSON.stringify({
      bomFormat: 'CycloneDX',
      specVersion: '1.5',
      components: Array.from({ length: SBOM_COMPONENTS }, (_, i) => ({
        type: 'library',
        name: `lib-${i}`,
        version: `2.${i % 10}.0`,
        purl: `pkg:npm/%40scope-${i % 50}/lib-${i}@2.${i % 10}.0`,
      })),
    });
    const plain = bom.replaceAll('bomFormat', 'xomFormat');
    const attest = async (trail: string, file: string, fingerprint: string) => {
      await call('POST', `/api/v2/artifacts/${api.org}/sbom-bench`, {
        payload: Buffer.from(
          JSON.stringify({
            fingerprint,
            filename: 'app',
            git_commit: 'a'.repeat(40),
            build_url: 'https://ci.example/1',
            commit_url: 'https://git.example/1',
            trail_name: trail,
          }),
        ),
        type: 'application/json',
      });
      const boundary = 'benchboundary';
      const payload = Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="data_json"\r\n\r\n${JSON.stringify({ attestation_name: 'sbom', artifact_fingerprint: fingerprint, is_compliant: true })}\r\n` +
            `--${boundary}\r\nContent-Disposition: form-data; name="attachment_file"; filename="bom.json"\r\nContent-Type: application/octet-stream\r\n\r\n`,
        ),
        Buffer.from(file),
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      return (
        await call('POST', `/api/v2/attestations/${api.org}/sbom-bench/trail/${trail}/generic`, {
          payload,
          type: `multipart/form-data; boundary=${boundary}`,
        })
      ).ms;
    };
    const withSbom: number[] = [];
    const without: number[] = [];
    for (let i = 0; i < 9; i++) {
      const fp = (n: number) => n.toString(16).padStart(64, '0');
      without.push(await attest(`plain-${i}`, plain, fp(2 * i + 1)));
      withSbom.push(await attest(`sbom-${i}`, bom, fp(2 * i + 2)));
    }
    const added = median(withSbom) - median(without);
    ctx.log(
      `attestation with a ${(bom.length / 1024) | 0} KiB file: ${median(without).toFixed(0)} ms plain, ${median(withSbom).toFixed(0)} ms as a ${SBOM_COMPONENTS}-component SBOM`,
    );

    const ratio = (ms: number) => `${(ms / baseline).toFixed(0)}x baseline ${baseline.toFixed(2)} ms`;
    return [
      {
        name: `exposure query p99 (${ARTIFACTS} artifacts x ${COMPONENTS} components, ${ENVIRONMENTS} envs x ${SNAPSHOTS} snapshots)`,
        value: `${p99.toFixed(1)} ms (${ratio(p99)})`,
        target: '< 200 ms',
        pass: p99 < 200,
      },
      {
        name: `indexing a ${SBOM_COMPONENTS}-component SBOM adds to its attestation`,
        value: `${added.toFixed(0)} ms (${ratio(added)})`,
        target: '< 300 ms',
        pass: added < 300,
      },
    ];
  } finally {
    await api.close();
  }
}

function rand(n: number): number {
  return Math.floor(Math.random() * n);
}

/** The seed, set-based in SQL: one statement per table. */
export async function seed(db: Db, org: string): Promise<void> {
  const t0 = '2026-01-01T00:00:00Z';
  await sql`insert into flows (org_id, id, name, created_by, created_at, last_modified_at)
    select ${org}, 'flow-' || f, 'flow-' || f, 'bench', ${t0}::timestamptz, ${t0}::timestamptz
    from generate_series(0, 19) f`.execute(db);
  await sql`insert into trails (org_id, id, flow_id, name, created_by, created_at, last_modified_at,
      compliance, compliance_state, evaluated_at)
    select ${org}, 'trail-' || i, 'flow-' || (i % 20), 'trail-' || i, 'bench', ${t0}::timestamptz,
      ${t0}::timestamptz, '{}'::jsonb, 'COMPLIANT', ${t0}::timestamptz
    from generate_series(0, ${ARTIFACTS - 1}) i`.execute(db);
  await sql`insert into artifacts (org_id, id, flow_id, trail_id, fingerprint, filename, git_commit,
      created_by, created_at, last_modified_at, state, compliance)
    select ${org}, 'artifact-' || i, 'flow-' || (i % 20), 'trail-' || i,
      encode(sha256(convert_to('artifact ' || i, 'UTF8')), 'hex'), 'registry.example/app-' || (i % 500),
      left(encode(sha256(convert_to('commit ' || i, 'UTF8')), 'hex'), 40), 'bench',
      ${t0}::timestamptz + i * interval '1 minute', ${t0}::timestamptz, 'COMPLIANT', '{}'::jsonb
    from generate_series(0, ${ARTIFACTS - 1}) i`.execute(db);
  await sql`insert into attestations (org_id, id, flow_id, trail_id, name, type, kind, is_compliant,
      artifact_fingerprint, payload, created_by, created_at)
    select ${org}, 'sbom-' || i, 'flow-' || (i % 20), 'trail-' || i, 'sbom', 'generic', 'generic', true,
      encode(sha256(convert_to('artifact ' || i, 'UTF8')), 'hex'), '{}'::jsonb, 'bench',
      ${t0}::timestamptz + i * interval '1 minute'
    from generate_series(0, ${ARTIFACTS - 1}) i`.execute(db);
  // 200 distinct package names per artifact, spread over 10,000 names; the version by artifact.
  await sql`insert into sbom_components (org_id, attestation_id, ord, trail_id, fingerprint, purl_type,
      purl_namespace, purl_name, purl_version, purl)
    select ${org}, 'sbom-' || i, j + 1, 'trail-' || i, encode(sha256(convert_to('artifact ' || i, 'UTF8')), 'hex'),
      'npm', '', 'pkg-' || ((i * 37 + j * 50) % ${NAMES}), '1.' || (i % 4) || '.0',
      'pkg:npm/pkg-' || ((i * 37 + j * 50) % ${NAMES}) || '@1.' || (i % 4) || '.0'
    from generate_series(0, ${ARTIFACTS - 1}) i, generate_series(0, ${COMPONENTS - 1}) j`.execute(db);
  await sql`insert into environments (org_id, id, name, type, created_by, created_at, last_modified_at,
      latest_snapshot, compliant)
    select ${org}, 'env-' || e, 'env-' || e, 'K8S', 'bench', ${t0}::timestamptz, ${t0}::timestamptz,
      ${SNAPSHOTS}, true
    from generate_series(0, ${ENVIRONMENTS - 1}) e`.execute(db);
  // A snapshot a minute; each environment's compliance changes every 50 snapshots.
  await sql`insert into runtime_snapshots (org_id, environment_id, index, created_at, compliant, started,
      changed, exited, artifact_count, cause, applied_policies)
    select ${org}, 'env-' || e, s, ${t0}::timestamptz + s * interval '1 minute', ((s + e) / 50) % 3 <> 2,
      1, 0, 1, 20, 'report', '[]'::jsonb
    from generate_series(0, ${ENVIRONMENTS - 1}) e, generate_series(1, ${SNAPSHOTS}) s`.execute(db);
  await sql`insert into runtime_details (org_id, hash, detail) values (${org}, 'd', '[]'::jsonb)`.execute(db);
  await sql`insert into runtime_verdicts (org_id, hash, compliant, provenance, decisions, reasons, allowlisted)
    values (${org}, 'v', true, '[]'::jsonb, '[]'::jsonb, '[]'::jsonb, false)`.execute(db);
  // Each artifact runs twice, in two environments: 20-100 snapshots, or still running (a tenth).
  await sql`insert into runtime_states (org_id, environment_id, fingerprint, from_index, to_index, exited,
      exit_count, name, instance_count, was_count, change, detail_hash, verdict_hash, run_start)
    select ${org}, 'env-' || ((i * 7 + k * 23) % ${ENVIRONMENTS}), fp, st,
      case when i % 10 = 0 then null else least(st + 20 + (i % 81), ${SNAPSHOTS}) end,
      i % 10 <> 0, case when i % 10 = 0 then null else 1 end, 'app', 1, 0, 'started', 'd', 'v', st
    from (select i, k, encode(sha256(convert_to('artifact ' || i, 'UTF8')), 'hex') as fp,
        1 + (i * 13 + k * 301) % (${SNAPSHOTS} - 120) as st
      from generate_series(0, ${ARTIFACTS - 1}) i, generate_series(0, 1) k) r`.execute(db);
}
