/**
 * Retention classes as an admin sets them and the retention job (`npm run admin -- retention
 * run`) removes what passed its period, as a client then sees it: trails exactly past their
 * days (the boundary kept), per-flow and per-environment classes, evidence files that no
 * remaining attestation names, snapshots with the remaining ones reading as before, audit log
 * entries; the operator's minimum; dry runs that remove nothing and list the same; disposition
 * records and audit entries; admins alone.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retentionCommand } from '../../services/api/src/admin-retention.js';
import { client, createTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { deployment, fp } from '../helpers/runtime.js';

const ORG = 'keeper';
const DAY = 86_400_000;
const ENV = {
  VERITY_RETENTION_MIN_AUDIT_LOG_DAYS: '30',
  VERITY_RETENTION_PAUSE_MS: '0',
  VERITY_RETENTION_BATCH_SIZE: '2',
};
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

let t: TestApp;
let cli: ReturnType<typeof cliClient>;
let api: ReturnType<typeof client>;
let member: ReturnType<typeof client>;
let t0: number;

/** One generic attestation on a trail (created when missing), with a file when given. */
async function attest(flow: string, trail: string, name: string, file?: string) {
  const r = await cli.multipart('POST', `/api/v2/attestations/${ORG}/${flow}/trail/${trail}/generic`, [
    { name: 'data_json', value: JSON.stringify({ attestation_name: name, is_compliant: true }) },
    ...(file ? [{ name: 'attachment_file', filename: `${name}.txt`, content: file }] : []),
  ]);
  expect(r.status, r.body).toBe(201);
}

async function trail(flow: string, name: string) {
  expect((await cli.json('PUT', `/api/v2/trails/${ORG}/${flow}`, { name })).status).toBe(201);
}

/** Runs `retention run` as the admin command does, at `asOf` (ms since t0). */
async function run(asOfMs: number, dryRun = false) {
  const progress: string[] = [];
  const lines = await retentionCommand(
    t.db.db,
    ['retention', 'run', ...(dryRun ? ['--dry-run'] : []), '--as-of', new Date(t0 + asOfMs).toISOString()],
    testConfig(ENV),
    { store: t.app.services.store, now: t.clock.now, progress: (p) => progress.push(`${p.kind} ${p.count}`) },
  );
  return { lines, items: lines.filter((l) => l.startsWith('  ')).sort(), progress };
}

const download = async (flow: string, trailName: string, attestation: string) => {
  const r = await api.get(`/api/v2/attestations/${ORG}/${flow}/trail/${trailName}/${attestation}`);
  expect(r.status, r.body).toBe(200);
  return t.app.inject({
    url: new URL(r.json[0].evidence_file.download_url).pathname,
    headers: { authorization: `Bearer ${adminKey}` },
  });
};
let adminKey: string;

beforeAll(async () => {
  t = await createTestApp({ env: ENV });
  t0 = t.clock.now().getTime();
  adminKey = await t.seedKey(ORG, 'admin');
  cli = cliClient(t.app, adminKey);
  api = client(t.app, adminKey);
  member = client(t.app, await t.seedKey(ORG, 'member'));
  for (const flow of ['apps', 'keep', 'files']) {
    expect((await cli.json('PUT', `/api/v2/flows/${ORG}`, { name: flow, description: '' })).status).toBe(201);
  }
  // Day 0: an old trail with its own file and one it shares with a flow kept longer.
  await trail('apps', 'old');
  await attest('apps', 'old', 'junit', 'only-old');
  await attest('apps', 'old', 'sbom', 'shared');
  await trail('keep', 'k1');
  await attest('keep', 'k1', 'sbom', 'shared');
  await trail('files', 'f1');
  await attest('files', 'f1', 'scan', 'scan-report');
  // Day 1: a trail one day younger.
  t.clock.advance(DAY);
  await trail('apps', 'edge');
  await attest('apps', 'edge', 'junit', 'edge-file');
  t.clock.advance(20 * DAY);
});
afterAll(async () => t?.close());

describe('retention settings', () => {
  it('keeps everything forever until classes are set, and says so', async () => {
    const r = await api.get(`/api/v2/retention/${ORG}`);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ default: {}, flows: {}, environments: {}, updated_at: null });
    expect(r.json.operator_minimum).toEqual({
      trails_days: 0,
      evidence_files_days: 0,
      snapshots_days: 0,
      audit_log_days: 30,
    });
    const dry = await run(365 * DAY, true);
    expect(dry.lines).toContain('no organization sets retention classes');
  });

  it('refuses a period below the operator minimum, naming it', async () => {
    const r = await api.put(`/api/v2/retention/${ORG}`, { default: { audit_log_days: 7 } });
    expect(r.status).toBe(400);
    expect(r.json.errors['default.audit_log_days']).toBe(
      'is 7; this server keeps audit log entries at least 30 days (VERITY_RETENTION_MIN_AUDIT_LOG_DAYS)',
    );
  });

  it.each([
    [{ default: { trails_days: 0 } }, 'default.trails_days'],
    [{ default: { trails_days: 1.5 } }, 'default.trails_days'],
    [{ default: { trails_days: '10' } }, 'default.trails_days'],
    [{ default: { forever: 1 } }, 'default'],
    [{ flows: { 'bad name!': { trails_days: 3 } } }, 'flows'],
    [{ other: {} }, ''],
  ])('answers 400 to %j', async (body, field) => {
    const r = await api.put(`/api/v2/retention/${ORG}`, body);
    expect(r.status, r.body).toBe(400);
    expect(JSON.stringify(r.json)).toContain(field);
  });

  it('is for admins: a member gets 403 reading or writing', async () => {
    expect((await member.get(`/api/v2/retention/${ORG}`)).status).toBe(403);
    expect((await member.put(`/api/v2/retention/${ORG}`, { default: {} })).status).toBe(403);
    expect((await member.get(`/api/v2/retention/${ORG}/dispositions`)).status).toBe(403);
  });

  it('stores classes, and lists names that no flow or environment carries', async () => {
    const r = await api.put(`/api/v2/retention/${ORG}`, {
      default: { trails_days: 10, audit_log_days: 30 },
      flows: {
        keep: { trails_days: 365 },
        files: { evidence_files_days: 3, trails_days: 365 },
        later: { trails_days: 5 },
      },
      environments: { prod: { snapshots_days: 5 } },
    });
    expect(r.status, r.body).toBe(200);
    expect(r.json.unknown_flows).toEqual(['later']);
    expect(r.json.unknown_environments).toEqual(['prod']);
    expect((await api.get(`/api/v2/retention/${ORG}`)).json.flows.keep).toEqual({ trails_days: 365 });
  });
});

describe('the retention run', () => {
  it('removes nothing at the boundary: a trail exactly ten days old stays', async () => {
    const dry = await run(10 * DAY, true);
    expect(dry.items.filter((l) => l.startsWith('  trail'))).toEqual([]);
  });

  it('lists in a dry run what it then removes, and removes nothing in the dry run', async () => {
    const asOf = 10 * DAY + 1000;
    const dry = await run(asOf, true);
    expect(dry.items).toEqual(
      [
        `  trail apps/old`,
        `  evidence file ${sha('only-old')}`,
        `  evidence file ${sha('scan-report')}`,
      ].sort(),
    );
    expect((await api.get(`/api/v2/trails/${ORG}/apps/old`)).status).toBe(200);
    const real = await run(asOf);
    expect(real.items).toEqual(dry.items);
    expect(real.lines[1]).toBe(
      `${ORG}: removed 1 trails (2 attestations), 2 evidence files, 0 snapshots, 0 audit log entries`,
    );
    expect(real.progress).toContain('trails 1');
  });

  it('leaves trails younger than their period, and a flow kept longer', async () => {
    expect((await api.get(`/api/v2/trails/${ORG}/apps/old`)).status).toBe(404);
    expect((await api.get(`/api/v2/trails/${ORG}/apps/edge`)).status).toBe(200);
    expect((await api.get(`/api/v2/trails/${ORG}/keep/k1`)).status).toBe(200);
  });

  it('keeps a file another attestation still names', async () => {
    const res = await download('keep', 'k1', 'sbom');
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('shared');
  });

  it('removes a file past its own period and keeps the attestation that named it', async () => {
    const res = await download('files', 'f1', 'scan');
    expect(res.statusCode).toBe(404);
  });

  it('leaves a disposition record per removal and an audit entry naming the job', async () => {
    const d = await api.get(`/api/v2/retention/${ORG}/dispositions`);
    expect(d.status).toBe(200);
    const byKind = Object.fromEntries(d.json.dispositions.map((x: any) => [x.kind, x]));
    expect(byKind.trails).toMatchObject({
      count: 1,
      items: [{ flow: 'apps', trail: 'old', attestations: 2 }],
      digests: [sha('only-old')],
      rule: { period: 'trails_days', days: 10, scope: 'default', name: null },
      as_of: (t0 + 10 * DAY + 1000) / 1000,
      run_by: 'admin-cli',
    });
    expect(byKind.evidence_files).toMatchObject({
      count: 1,
      digests: [sha('scan-report')],
      rule: { period: 'evidence_files_days', days: 3, scope: 'flow', name: 'files' },
    });
    const audit = await api.get(`/api/v2/audit-log/${ORG}?action=retentionRemoveTrails`);
    expect(audit.json.entries).toHaveLength(1);
    expect(audit.json.entries[0]).toMatchObject({
      actor: { kind: 'system', name: 'admin-cli' },
      resource: `/api/v2/retention/${ORG}/dispositions/${byKind.trails.id}`,
    });
  });

  it('removes nothing more when run again at the same time', async () => {
    const again = await run(10 * DAY + 1000);
    expect(again.items).toEqual([]);
  });

  it('removes audit log entries past their period and keeps the younger ones', async () => {
    const before = (await api.get(`/api/v2/audit-log/${ORG}?per_page=100`)).json.entries.length;
    const real = await run(31 * DAY);
    expect(real.lines[1]).toMatch(/, [1-9]\d* audit log entries$/);
    const left = (await api.get(`/api/v2/audit-log/${ORG}?per_page=100`)).json.entries;
    expect(left.length).toBeLessThan(before);
    expect(left.every((e: any) => e.at * 1000 >= t0 + DAY)).toBe(true);
  });
});

describe('snapshots', () => {
  const report = async (artifacts: unknown[]) =>
    (await api.put(`/api/v2/environments/${ORG}/prod/report/K8S`, { artifacts })).status;
  // Every snapshot in the log first, so its log_index reads the same before and after a run.
  const snap = async (i: number | string) => {
    await t.app.transparencyLog.sequence();
    return api.get(`/api/v2/snapshots/${ORG}/prod/${i}`);
  };

  it('removes old snapshots while the oldest kept one and the latest read as before', async () => {
    const start = t.clock.now().getTime();
    expect(
      (await api.put(`/api/v2/environments/${ORG}`, { name: 'prod', type: 'K8S', description: '' })).status,
    ).toBe(201);
    expect(await report(deployment('api', 'api:1', fp('a'), 2))).toBe(200);
    const hold = await api.post(`/api/v2/legal-holds/${ORG}`, {
      name: 'first-release',
      reason: 'Kept for the audit of the first release',
      scope: {
        environments: ['prod'],
        from: new Date(start - 1000).toISOString(),
        to: (start + 1000) / 1000,
      },
    });
    expect(hold.status, hold.body).toBe(201);
    t.clock.advance(DAY);
    expect(
      await report([...deployment('api', 'api:1', fp('a'), 2), ...deployment('web', 'web:1', fp('b'), 1)]),
    ).toBe(200);
    t.clock.advance(DAY);
    expect(await report(deployment('web', 'web:1', fp('b'), 1))).toBe(200);
    t.clock.advance(DAY);
    expect(
      await report([...deployment('web', 'web:1', fp('b'), 1), ...deployment('db', 'db:1', fp('c'), 1)]),
    ).toBe(200);
    t.clock.advance(20 * DAY);
    expect(await report(deployment('db', 'db:1', fp('c'), 1))).toBe(200);
    const first = (await snap(1)).json;
    const latest = (await snap(-1)).json;
    expect(latest.index).toBe(5);

    const asOf = t.clock.now().getTime() - t0;
    const dry = await run(asOf, true);
    const snapshots = (items: string[]) => items.filter((l) => l.startsWith('  snapshot'));
    expect(snapshots(dry.items)).toEqual(['  snapshot prod#2', '  snapshot prod#3', '  snapshot prod#4']);
    const real = await run(asOf);
    expect(real.items).toEqual(dry.items);
    expect((await snap(1)).json).toEqual(first);
    expect((await snap(-1)).json).toEqual(latest);
    expect((await snap(5)).json).toEqual(latest);
    for (const gone of [2, 3, 4]) {
      expect((await snap(gone)).status).toBe(404);
    }
  });

  it('removes the held snapshot once the hold is released', async () => {
    expect((await member.delete(`/api/v2/legal-holds/${ORG}/first-release`, null)).status).toBe(403);
    expect((await api.delete(`/api/v2/legal-holds/${ORG}/first-release`, null)).status).toBe(200);
    const latest = (await snap(-1)).json;
    const real = await run(t.clock.now().getTime() - t0);
    expect(real.items.filter((l) => l.startsWith('  snapshot'))).toEqual(['  snapshot prod#1']);
    expect((await snap(1)).status).toBe(404);
    expect((await snap(-1)).json).toEqual(latest);
  });
});

describe('the transparency log', () => {
  it('logs each removal and each disposition, so the self-check finds nothing missing', async () => {
    await t.app.transparencyLog.sequence();
    const entries: Array<{ kind: string; record: Record<string, unknown> }> = [];
    const checkpoint = await api.get(`/api/v2/log/${ORG}/checkpoint`);
    const size = Number(checkpoint.body.split('\n')[1]);
    for (let from = 0; from < size; from += 100) {
      const page = await api.get(`/api/v2/log/${ORG}/entries?from=${from}&to=${Math.min(size, from + 100)}`);
      expect(page.status, page.body).toBe(200);
      entries.push(...((page.json.entries ?? page.json) as typeof entries));
    }
    const removed = (kind: string) => entries.filter((e) => e.kind === kind && e.record.removed === true);
    // The old trail went with its two attestations (and later runs took more); so did snapshots.
    expect(removed('trail').map((e) => e.record.name)).toContain('old');
    expect(removed('attestation').map((e) => e.record.name)).toEqual(
      expect.arrayContaining(['junit', 'sbom']),
    );
    expect(removed('snapshot').length).toBeGreaterThan(0);
    // Nothing is logged as removed that still reads.
    for (const e of removed('trail')) {
      expect((await api.get(`/api/v2/trails/${ORG}/apps/${String(e.record.name)}`)).status).toBe(404);
    }
    const dispositions = entries.filter((e) => e.kind === 'disposition');
    expect(dispositions.map((e) => e.record.removed_kind)).toEqual(
      expect.arrayContaining(['trails', 'evidence_files', 'snapshots', 'audit_log']),
    );
    expect(await t.app.transparencyLog.selfCheck()).toEqual([]);
  });
});

describe('the disposition list', () => {
  it('says how many records the runs left, and the next page holds the rest', async () => {
    const all = await api.get(`/api/v2/retention/${ORG}/dispositions?per_page=100`);
    expect(all.status, all.body).toBe(200);
    const ids: string[] = all.json.dispositions.map((d: { id: string }) => d.id);
    // trails, evidence files, audit log entries, and snapshots in two runs
    expect(ids.length).toBeGreaterThanOrEqual(5);
    expect(all.json).toMatchObject({ next: null, total_count: ids.length, total_count_capped: false });

    const perPage = Math.ceil(ids.length / 2);
    const first = await api.get(`/api/v2/retention/${ORG}/dispositions?per_page=${perPage}`);
    expect(first.json).toMatchObject({ total_count: ids.length, total_count_capped: false });
    expect(first.json.dispositions.map((d: { id: string }) => d.id)).toEqual(ids.slice(0, perPage));
    expect(first.json.next).toMatch(/\/dispositions\?page=2&per_page=\d+$/);

    const second = await api.get(new URL(first.json.next).pathname + new URL(first.json.next).search);
    expect(second.status, second.body).toBe(200);
    expect(second.json).toMatchObject({ next: null, total_count: ids.length, total_count_capped: false });
    expect(second.json.dispositions.map((d: { id: string }) => d.id)).toEqual(ids.slice(perPage));
  });

  it('answers 400 past the last page it lists', async () => {
    const r = await api.get(`/api/v2/retention/${ORG}/dispositions?page=1001`);
    expect(r.status).toBe(400);
  });
});
