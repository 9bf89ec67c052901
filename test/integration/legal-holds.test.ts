/**
 * Legal holds as an admin places and releases them, and what they keep from the retention job:
 * a flow's trails within a time range (not those outside it), an organization-wide hold over the
 * audit log, and removal once the hold is released. Holds are admin-only, audited, named once,
 * and bad input is a 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retentionCommand } from '../../services/api/src/admin-retention.js';
import { client, createTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';

const ORG = 'holder';
const DAY = 86_400_000;
const ENV = { VERITY_RETENTION_PAUSE_MS: '0' };

let t: TestApp;
let cli: ReturnType<typeof cliClient>;
let api: ReturnType<typeof client>;
let member: ReturnType<typeof client>;
let t0: number;

async function trailAt(flow: string, name: string) {
  expect((await cli.json('PUT', `/api/v2/trails/${ORG}/${flow}`, { name })).status).toBe(201);
  const r = await cli.multipart('POST', `/api/v2/attestations/${ORG}/${flow}/trail/${name}/generic`, [
    { name: 'data_json', value: JSON.stringify({ attestation_name: 'check', is_compliant: true }) },
  ]);
  expect(r.status, r.body).toBe(201);
}

/** The trails a run (or dry run) as of `asOfMs` after t0 removes. */
async function run(asOfMs: number, dryRun = false) {
  const lines = await retentionCommand(
    t.db.db,
    ['retention', 'run', ...(dryRun ? ['--dry-run'] : []), '--as-of', new Date(t0 + asOfMs).toISOString()],
    testConfig(ENV),
    { store: t.app.services.store, now: t.clock.now, progress: () => undefined },
  );
  return { lines, trails: lines.filter((l) => l.startsWith('  trail ')).map((l) => l.slice(8)) };
}

const exists = async (flow: string, trail: string) =>
  (await api.get(`/api/v2/trails/${ORG}/${flow}/${trail}`)).status === 200;

beforeAll(async () => {
  t = await createTestApp({ env: ENV });
  t0 = t.clock.now().getTime();
  const key = await t.seedKey(ORG, 'admin');
  cli = cliClient(t.app, key);
  api = client(t.app, key);
  member = client(t.app, await t.seedKey(ORG, 'member'));
  for (const flow of ['payments', 'web']) {
    expect((await cli.json('PUT', `/api/v2/flows/${ORG}`, { name: flow, description: '' })).status).toBe(201);
  }
  await trailAt('payments', 'p-day0');
  await trailAt('web', 'w-day0');
  t.clock.advance(5 * DAY);
  await trailAt('payments', 'p-day5');
  t.clock.advance(60 * DAY);
  expect(
    (await api.put(`/api/v2/retention/${ORG}`, { default: { trails_days: 30, audit_log_days: 30 } })).status,
  ).toBe(200);
});
afterAll(async () => t?.close());

describe('legal holds', () => {
  it('answers 400 to bad holds, saying what is wrong', async () => {
    const cases: Array<[unknown, string]> = [
      [{ name: 'x' }, 'reason'],
      [{ name: 'x', reason: '   ' }, 'reason'],
      [{ name: 'bad name!', reason: 'r' }, 'name'],
      [{ name: 'x', reason: 'r', scope: { from: 200, to: 100 } }, 'scope.to'],
      [{ name: 'x', reason: 'r', scope: { from: 'yesterday' } }, 'scope.from'],
      [{ name: 'x', reason: 'r', scope: { flows: 'payments' } }, 'scope.flows'],
      [
        { name: 'x', reason: 'r', scope: { flows: Array.from({ length: 1001 }, (_, i) => `f${i}`) } },
        'scope.flows',
      ],
      [{ name: 'x', reason: 'r', extra: true }, ''],
    ];
    for (const [body, field] of cases) {
      const r = await api.post(`/api/v2/legal-holds/${ORG}`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(r.json.errors ?? r.json)).toContain(field);
    }
  });

  it('is for admins: a member gets 403 placing, listing or releasing', async () => {
    expect((await member.post(`/api/v2/legal-holds/${ORG}`, { name: 'm', reason: 'r' })).status).toBe(403);
    expect((await member.get(`/api/v2/legal-holds/${ORG}`)).status).toBe(403);
    expect((await member.delete(`/api/v2/legal-holds/${ORG}/m`, null)).status).toBe(403);
  });

  it('places a hold on a flow over a time range, lists it with what it covers, and names it once', async () => {
    const body = {
      name: 'refund-dispute',
      reason: 'Dispute 2026-118: refunds of the first week',
      scope: { flows: ['payments'], from: (t0 - DAY) / 1000, to: new Date(t0 + DAY).toISOString() },
    };
    const r = await api.post(`/api/v2/legal-holds/${ORG}`, body);
    expect(r.status, r.body).toBe(201);
    expect(r.json).toMatchObject({
      name: 'refund-dispute',
      scope: { flows: ['payments'], environments: [], from: (t0 - DAY) / 1000, to: (t0 + DAY) / 1000 },
    });
    expect((await api.post(`/api/v2/legal-holds/${ORG}`, body)).status).toBe(409);
    const list = await api.get(`/api/v2/legal-holds/${ORG}`);
    expect(list.json).toHaveLength(1);
    expect(list.json[0].covers).toBe(
      `the trails and evidence files of flow payments from ${new Date(t0 - DAY).toISOString()} to ${new Date(t0 + DAY).toISOString()}`,
    );
    const audit = await api.get(`/api/v2/audit-log/${ORG}?action=createLegalHold`);
    expect(audit.json.entries).toHaveLength(1);
  });

  it('keeps the held trail, and removes the same flow outside the range and other flows', async () => {
    const dry = await run(65 * DAY, true);
    expect(dry.trails.sort()).toEqual(['payments/p-day5', 'web/w-day0']);
    const real = await run(65 * DAY);
    expect(real.trails.sort()).toEqual(dry.trails.sort());
    expect(await exists('payments', 'p-day0')).toBe(true);
    expect(await exists('payments', 'p-day5')).toBe(false);
    expect(await exists('web', 'w-day0')).toBe(false);
  });

  it('keeps the audit log under a hold over the whole organization', async () => {
    const hold = await api.post(`/api/v2/legal-holds/${ORG}`, {
      name: 'everything',
      reason: 'Regulator inquiry',
    });
    expect(hold.status).toBe(201);
    expect(hold.json.covers).toBe(
      'every trail, evidence file, snapshot and audit log entry of the organization',
    );
    const before = (await api.get(`/api/v2/audit-log/${ORG}?per_page=100`)).json.entries.length;
    const r = await run(200 * DAY);
    expect(r.lines[1]).toMatch(/removed 0 trails .* 0 audit log entries$/);
    expect((await api.get(`/api/v2/audit-log/${ORG}?per_page=100`)).json.entries.length).toBe(before);
  });

  it('answers 404 releasing a hold that does not exist', async () => {
    const r = await api.delete(`/api/v2/legal-holds/${ORG}/nope`, null);
    expect(r.status).toBe(404);
    expect(r.json.message).toBe(`Legal hold 'nope' does not exist in '${ORG}'`);
  });

  it('removes what a released hold kept, and audits the release', async () => {
    expect((await api.delete(`/api/v2/legal-holds/${ORG}/everything`, null)).status).toBe(200);
    expect((await api.delete(`/api/v2/legal-holds/${ORG}/refund-dispute`, null)).status).toBe(200);
    expect((await api.get(`/api/v2/legal-holds/${ORG}`)).json).toEqual([]);
    const r = await run(65 * DAY);
    expect(r.trails).toEqual(['payments/p-day0']);
    expect(await exists('payments', 'p-day0')).toBe(false);
    const audit = await api.get(`/api/v2/audit-log/${ORG}?action=releaseLegalHold`);
    expect(audit.json.entries).toHaveLength(2);
  });
});
