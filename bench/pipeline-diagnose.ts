/**
 * Where the time of an attestation goes on trails with artifacts, on PostgreSQL:
 * `npx tsx bench/pipeline-diagnose.ts` (needs to read the server log, BENCH_PG_LOG, default
 * /var/log/postgresql/postgresql-15-main.log, and a superuser connection).
 *  1. Statements per request: one CI run sent request by request, with `log_statement = all` on
 *     the API's sessions; the statements each request ran, counted from the server log between
 *     markers.
 *  2. Under load (64 connections; artifact-bound, trail-level, one trail): `pg_stat_activity`
 *     wait events and ungranted `pg_locks` sampled every 20 ms, lock waits over 20 ms
 *     (`log_lock_waits`), and plans of statements over BENCH_EXPLAIN_MS (default 20) ms with
 *     `auto_explain` (nested statements, i.e. inside the triggers, included).
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import pg from 'pg';
import { attestArtifact, attestGeneric, beginWithArtifact, FLOW, setupFlow } from './pipeline-ci.js';
import { fingerprintOf, forDuration, Recorder, send, type Target } from './pipeline-client.js';
import { getLoad } from './pipeline-baseline.js';
import { ensureDatabase, PIPELINE_DATABASE_URL, startApiProcess } from './pipeline-server.js';
import { grownSchema } from './pipeline-grown.js';

const LOG = process.env.BENCH_PG_LOG ?? '/var/log/postgresql/postgresql-15-main.log';
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 8);
const EXPLAIN_MS = Number(process.env.BENCH_EXPLAIN_MS ?? 20);
/** Attestations to seed (pipeline-seed.ts) before the load part; 0: none. */
const SEED = Number(process.env.BENCH_DIAGNOSE_SEED ?? 0);
const DB = new URL(PIPELINE_DATABASE_URL).pathname.slice(1);
const out = (line = '') => process.stdout.write(`${line}\n`);

/** The server log written since `from` (bytes). */
function logSince(from: number): string {
  const size = statSync(LOG).size;
  const buf = Buffer.alloc(Math.max(0, size - from));
  const fd = openSync(LOG, 'r');
  readSync(fd, buf, 0, buf.length, from);
  closeSync(fd);
  return buf.toString();
}

/** Log entries (a line and its continuation lines) of this database's sessions. */
function entries(text: string): string[] {
  const list: string[] = [];
  for (const line of text.split('\n')) {
    if (/^\d{4}-\d\d-\d\d /.test(line)) {
      list.push(line);
    } else if (list.length > 0) {
      list[list.length - 1] += `\n${line}`;
    }
  }
  return list.filter((e) => e.includes(`@${DB} `));
}

/**
 * Background work that polls on its own timer, not part of any request. The attestation batch
 * write also names reevaluation_marks (it makes the marks): it is a request's statement.
 */
const BACKGROUND = /evidence_changes|pg_snapshot_xmin|notification_outbox|reevaluation_marks|claim/;
const isBackground = (s: string) => BACKGROUND.test(s) && !s.includes('insert into attestations');

/** Part 1: the statements each request of one CI run makes, in order. */
async function statementsPerRequest(t: Target, marker: pg.Client): Promise<void> {
  const steps: Array<{ kind: string; run: (rec: Recorder) => Promise<unknown> }> = [];
  const trail = `diag-${Date.now().toString(36)}`;
  const fp = fingerprintOf(`artifact ${trail}`);
  steps.push({ kind: 'begin trail + attest artifact', run: (rec) => beginWithArtifact(t, rec, trail, fp) });
  steps.push({ kind: 'five artifact-bound attestations', run: (rec) => attestArtifact(t, rec, trail, fp) });
  steps.push({
    kind: 'artifact-bound generic (again)',
    run: (rec) => attestGeneric(t, rec, 'g', trail, 'backend.lint', fp),
  });
  steps.push({
    kind: 'trail-level generic',
    run: (rec) => attestGeneric(t, rec, 'g', trail, 'security-review', null),
  });
  steps.push({
    kind: 'trail-level generic (again)',
    run: (rec) => attestGeneric(t, rec, 'g', trail, 'release-notes', null),
  });
  steps.push({
    kind: 'get artifact',
    run: () => send(t, 'GET', `/api/v2/artifacts/${t.org}/${FLOW}/fingerprint/${fp}`),
  });
  out('## Statements per request (log_statement = all, one request at a time)');
  for (const step of steps) {
    const from = statSync(LOG).size;
    await marker.query(`select 'verity-mark'`);
    const rec = new Recorder();
    await step.run(rec);
    // Let the log catch up.
    await new Promise((r) => setTimeout(r, 300));
    const stmts = entries(logSince(from))
      .filter((e) => /LOG: {2}(statement|execute)/.test(e) && !e.includes('verity-mark'))
      .map((e) => e.replace(/^.*?LOG: {2}/, '').replace(/\s+/g, ' '))
      .filter((s) => !isBackground(s));
    const failed = rec.failed() > 0 ? ` (FAILED: ${JSON.stringify([...rec.failures])})` : '';
    out(`\n### ${step.kind}: ${stmts.length} statements${failed}`);
    for (const s of stmts) {
      out(`- ${s.slice(0, 220)}`);
    }
  }
}

interface Samples {
  total: number;
  waits: Map<string, number>;
  locks: Map<string, number>;
}

/** Samples this database's sessions every 20 ms until `stop` resolves. */
async function sample(c: pg.Client, stop: Promise<void>): Promise<Samples> {
  const s: Samples = { total: 0, waits: new Map(), locks: new Map() };
  let done = false;
  void stop.then(() => (done = true));
  const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  while (!done) {
    const a = await c.query<{ w: string; q: string }>(
      `select coalesce(wait_event_type || ':' || wait_event, 'on CPU') || ' [' || state || ']' as w,
              left(regexp_replace(query, '\\s+', ' ', 'g'), 90) as q
         from pg_stat_activity where datname = $1 and pid <> pg_backend_pid() and state <> 'idle'`,
      [DB],
    );
    for (const r of a.rows) {
      s.total += 1;
      bump(s.waits, r.w.startsWith('Lock') || r.w.startsWith('LWLock') ? `${r.w} ${r.q}` : r.w);
    }
    const l = await c.query<{ k: string }>(
      `select l.locktype || ' ' || l.mode || coalesce(' on ' || l.relation::regclass::text, '') as k
         from pg_locks l join pg_stat_activity a on a.pid = l.pid
        where not l.granted and a.datname = $1`,
      [DB],
    );
    for (const r of l.rows) {
      bump(s.locks, r.k);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return s;
}

function printTop(title: string, m: Map<string, number>, total: number): void {
  out(`\n${title}`);
  for (const [k, n] of [...m].sort((a, b) => b[1] - a[1]).slice(0, 15)) {
    out(`- ${n} (${((n / Math.max(1, total)) * 100).toFixed(0)}%) ${k}`);
  }
}

/** Part 2: one workload under load, with samples, lock waits and slow plans. */
async function underLoad(
  t: Target,
  monitor: pg.Client,
  name: string,
  send1: (rec: Recorder, caller: number) => Promise<unknown>,
  callers = 64,
): Promise<void> {
  const from = statSync(LOG).size;
  const rec = new Recorder();
  let finish!: () => void;
  const stop = new Promise<void>((r) => (finish = r));
  const sampling = sample(monitor, stop);
  const elapsed = await forDuration(callers, DURATION_S, async (caller) => void (await send1(rec, caller)));
  finish();
  const s = await sampling;
  await new Promise((r) => setTimeout(r, 500));
  const p = rec.percentiles();
  out(
    `\n## ${name}: ${(rec.count() / elapsed).toFixed(0)} /s, p50 ${p.p50.toFixed(0)} ms, p99 ${p.p99.toFixed(0)} ms`,
  );
  out(`${s.total} active-session samples`);
  printTop('Wait events (share of active-session samples):', s.waits, s.total);
  printTop('Ungranted locks (samples):', s.locks, s.total);
  const log = entries(logSince(from));
  const waits = log.filter((e) => e.includes('still waiting for'));
  out(`\nLock waits over 20 ms logged: ${waits.length}`);
  const byKind = new Map<string, number>();
  for (const w of waits) {
    const k = (/still waiting for (\w+ on [^ ]+ [^\n]*?)(?: after|$)/m.exec(w)?.[1] ?? '?').replace(
      /\d+/g,
      'N',
    );
    const stmt = (/STATEMENT: {2}([^\n]*)/.exec(w)?.[1] ?? '').replace(/\s+/g, ' ').slice(0, 100);
    byKind.set(`${k} | ${stmt}`, (byKind.get(`${k} | ${stmt}`) ?? 0) + 1);
  }
  printTop('Lock waits by lock and statement:', byKind, waits.length);
  const plans = log.filter((e) => e.includes('duration:') && e.includes('plan:'));
  out(`\nauto_explain: ${plans.length} statements over ${EXPLAIN_MS} ms; the slowest three:`);
  const dur = (e: string) => Number(/duration: ([\d.]+) ms/.exec(e)?.[1] ?? 0);
  for (const e of plans.sort((a, b) => dur(b) - dur(a)).slice(0, 3)) {
    out('```');
    out(e.split('\n').slice(0, 40).join('\n').slice(0, 3000));
    out('```');
  }
}

async function main(): Promise<void> {
  await ensureDatabase();
  const options = [
    '-c log_statement=all',
    '-c log_lock_waits=on',
    '-c deadlock_timeout=20ms',
    '-c session_preload_libraries=auto_explain',
    `-c auto_explain.log_min_duration=${EXPLAIN_MS}`,
    '-c auto_explain.log_nested_statements=on',
    '-c auto_explain.log_analyze=on',
    '-c auto_explain.log_timing=off',
    '-c auto_explain.log_buffers=on',
  ];
  const grown = SEED > 0 ? await grownSchema('pipeline_diag', SEED, (line) => out(line)) : undefined;
  const api = await startApiProcess({
    pgOptions: options.join(' '),
    ...(grown ? { schema: grown.schema } : {}),
  });
  const marker = new pg.Client({ connectionString: PIPELINE_DATABASE_URL, options: '-c log_statement=all' });
  const monitor = new pg.Client({ connectionString: PIPELINE_DATABASE_URL });
  await marker.connect();
  await monitor.connect();
  try {
    if (!grown) {
      await setupFlow(api);
      await statementsPerRequest(api, marker);
    }
    const trails = Array.from({ length: 64 }, (_, i) => `load-${Date.now().toString(36)}-${i}`);
    const fps = trails.map((tr) => fingerprintOf(`artifact ${tr}`));
    await Promise.all(trails.map((tr, i) => beginWithArtifact(api, new Recorder(), tr, fps[i]!)));
    const which = (process.env.BENCH_DIAGNOSE ?? 'bound,trail,one').split(',');
    if (which.includes('bound')) {
      await underLoad(api, monitor, 'artifact-bound generic, 64 trails with artifacts', (rec, i) =>
        attestGeneric(api, rec, 'bound', trails[i]!, 'backend.lint', fps[i]!),
      );
    }
    if (which.includes('trail')) {
      await underLoad(api, monitor, 'trail-level generic, 64 trails with artifacts', (rec, i) =>
        attestGeneric(api, rec, 'trail', trails[i]!, 'security-review', null),
      );
    }
    if (which.includes('one')) {
      await underLoad(api, monitor, 'one trail with an artifact, 64 writers', (rec) =>
        attestGeneric(api, rec, 'one', trails[0]!, 'backend.lint', fps[0]!),
      );
    }
    if (which.includes('get')) {
      const headers = { authorization: `Bearer ${api.key}` };
      const paths = fps.map((fp) => `/api/v2/artifacts/${api.org}/${FLOW}/fingerprint/${fp}`);
      await underLoad(
        api,
        monitor,
        'GET artifact by fingerprint',
        async () => {
          const r = await getLoad(api.url, paths, headers, 64, DURATION_S);
          out(`GET artifact: ${r.rate.toFixed(0)} /s, p50 ${r.p50} ms, p99 ${r.p99} ms`);
        },
        1,
      );
    }
  } finally {
    await marker.end();
    await monitor.end();
    await api.stop();
    await grown?.drop();
  }
}

await main();
