/**
 * Exposure by package name at its limits, through the real API over HTTP, on PGlite (the
 * default; `BENCH_EXPOSURE_POSTGRES=1` for PostgreSQL at BENCH_DATABASE_URL):
 *
 * - one SBOM with 50,000 versions of one package (VERITY_SBOM_MAX_COMPONENTS and
 *   VERITY_SBOM_MAX_VERSIONS raised to 60,000): the attestation, then pages of 100 rows at the
 *   start, the middle and the end of the 50,000 matches;
 * - 20 SBOMs of 50,000 components each in one `evidence.tgz` archive, with the default bound of
 *   20,000 components per attestation and with it raised to 50,000: the attestation, then a
 *   page of the package indexed last.
 *
 * For each request: its input size, its time, the longest `/healthz` answer while it ran (pinged
 * every 50 ms: how long the event loop was held), the process's peak RSS so far, and the cost
 * per item. Target: a 100-row page within 500 ms.
 *
 * The API runs in a child process of its own as the image starts it (`pipeline-server.ts`), with
 * the embedded database in a directory (opened once before: `restartedOn` in limits.bench.ts), a
 * new process for each case; the peak memory is that
 * process's (VmHWM). BENCH_LIMITS_API=inline runs it in this process with the database in memory
 * (the layout of the first figures: this process's own documents and every earlier case count).
 *
 * Run: `npx tsx bench/limits-exposure.ts`.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startApi, type BenchFigure } from './harness.js';
import { restartedOn } from './limits.bench.js';
import { ensureDatabase, startApiProcess } from './pipeline-server.js';

/** The API under measurement; `pid` when it runs in a child process. */
interface RunningApi {
  url: string;
  org: string;
  key: string;
  pid?: number;
}

/** Peak resident memory of the API so far, in MiB. */
function peakRssMiB(api: RunningApi): number {
  if (api.pid === undefined) {
    return process.resourceUsage().maxRSS / 1024;
  }
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${api.pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}
import { tgz } from '../test/helpers/tar.js';

const VERSIONS = 50_000;
const DOCUMENTS = 20;
const PER_PAGE = 100;
const PAGE_TARGET_MS = 500;
const PING_MS = 50;

const cyclonedx = (purls: string[]) =>
  JSON.stringify({ bomFormat: 'CycloneDX', specVersion: '1.5', components: purls.map((purl) => ({ purl })) });

interface Measured {
  ms: number;
  healthzMaxMs: number;
  peakRssMiB: number;
  body: string;
}

/** One request, with /healthz pinged every PING_MS while it runs. */
async function measured(api: RunningApi, path: string, init: RequestInit = {}): Promise<Measured> {
  let running = true;
  let healthzMaxMs = 0;
  const pinger = (async () => {
    while (running) {
      const start = performance.now();
      await (await fetch(`${api.url}/healthz`)).arrayBuffer();
      healthzMaxMs = Math.max(healthzMaxMs, performance.now() - start);
      await new Promise((r) => setTimeout(r, PING_MS));
    }
  })();
  const start = performance.now();
  const res = await fetch(`${api.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${api.key}`, ...(init.headers as Record<string, string>) },
  });
  const body = await res.text();
  const ms = performance.now() - start;
  running = false;
  await pinger;
  if (res.status >= 300) {
    throw new Error(`${path}: ${res.status} ${body.slice(0, 300)}`);
  }
  return { ms, healthzMaxMs, peakRssMiB: peakRssMiB(api), body };
}

async function setup(api: RunningApi, trail: string): Promise<string> {
  const fingerprint = createHash('sha256').update(`exposure ${trail}`).digest('hex');
  const json = { 'content-type': 'application/json' };
  await measured(api, `/api/v2/flows/${api.org}`, {
    method: 'PUT',
    headers: json,
    body: JSON.stringify({ name: 'shop', description: '' }),
  });
  await measured(api, `/api/v2/artifacts/${api.org}/shop`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({
      fingerprint,
      filename: `registry.example/shop:${trail}`,
      build_url: 'https://ci/1',
      commit_url: 'https://git/1',
      trail_name: trail,
    }),
  });
  return fingerprint;
}

/** POST a generic attestation with `file` attached to the artifact, as the CLI sends it. */
function attest(api: RunningApi, trail: string, fingerprint: string, file: { name: string; data: Buffer }) {
  const form = new FormData();
  form.append(
    'data_json',
    JSON.stringify({ attestation_name: 'sbom', is_compliant: true, artifact_fingerprint: fingerprint }),
  );
  form.append('attachment_file', new Blob([file.data]), file.name);
  return measured(api, `/api/v2/attestations/${api.org}/shop/trail/${trail}/generic`, {
    method: 'POST',
    body: form,
  });
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const line = (what: string, m: Measured, extra = '') =>
  `${what}: ${m.ms.toFixed(0)} ms, /healthz at most ${m.healthzMaxMs.toFixed(0)} ms, ` +
  `peak RSS ${m.peakRssMiB.toFixed(0)} MiB${extra}`;

async function withApi<T>(env: Record<string, string>, run: (api: RunningApi) => Promise<T>): Promise<T> {
  const postgres = process.env.BENCH_EXPOSURE_POSTGRES === '1';
  if (process.env.BENCH_LIMITS_API === 'inline') {
    const api = await startApi({ postgres, env });
    try {
      return await run(api);
    } finally {
      await api.close();
    }
  }
  const dir = postgres ? undefined : mkdtempSync(join(tmpdir(), 'verity-exposure-'));
  if (postgres) {
    await ensureDatabase();
  }
  const child = dir ? await restartedOn(dir, env) : await startApiProcess({ env });
  try {
    return await run({ url: child.url, org: child.org, key: child.adminKey, pid: child.pid });
  } finally {
    await child.stop();
    if (dir) {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

/** One SBOM with VERSIONS versions of one package; pages at the start, middle and end. */
async function manyVersions(log: (l: string) => void): Promise<BenchFigure[]> {
  const env = { VERITY_SBOM_MAX_COMPONENTS: '60000', VERITY_SBOM_MAX_VERSIONS: '60000' };
  return withApi(env, async (api) => {
    const fingerprint = await setup(api, 'versions');
    const doc = Buffer.from(
      cyclonedx(Array.from({ length: VERSIONS }, (_, i) => `pkg:npm/x@1.0.${String(i).padStart(5, '0')}`)),
    );
    const a = await attest(api, 'versions', fingerprint, { name: 'bom.json', data: doc });
    log(
      line(
        `one SBOM, ${VERSIONS.toLocaleString('en-US')} versions of one package (${mib(doc.length)}), attestation`,
        a,
        `, ${((a.ms / VERSIONS) * 1000).toFixed(1)} us per component`,
      ),
    );
    const figures: BenchFigure[] = [];
    const lastPage = Math.ceil(VERSIONS / PER_PAGE);
    for (const page of [1, Math.ceil(lastPage / 2), lastPage]) {
      await measured(api, `/api/v2/exposure/${api.org}?purl=pkg:npm/x&page=${page}&per_page=${PER_PAGE}`);
      const m = await measured(
        api,
        `/api/v2/exposure/${api.org}?purl=pkg:npm/x&page=${page}&per_page=${PER_PAGE}`,
      );
      const shown = (JSON.parse(m.body) as { artifacts: Array<{ components: unknown[] }> }).artifacts.reduce(
        (n, x) => n + x.components.length,
        0,
      );
      log(
        line(
          `  page ${page} of ${lastPage} (${shown} rows of ${VERSIONS.toLocaleString('en-US')})`,
          m,
          `, ${((m.ms / Math.max(shown, 1)) * 1000).toFixed(0)} us per row shown`,
        ),
      );
      figures.push({
        name: `exposure page ${page}/${lastPage}, ${PER_PAGE} of ${VERSIONS} versions`,
        value: `${m.ms.toFixed(0)} ms (/healthz max ${m.healthzMaxMs.toFixed(0)} ms)`,
        target: `< ${PAGE_TARGET_MS} ms`,
        pass: m.ms < PAGE_TARGET_MS,
      });
    }
    return figures;
  });
}

/** DOCUMENTS SBOMs of VERSIONS distinct packages each in one evidence.tgz, at a bound. */
async function archive(log: (l: string) => void, bound: number | undefined): Promise<BenchFigure[]> {
  const env: Record<string, string> =
    bound === undefined ? {} : { VERITY_SBOM_MAX_COMPONENTS: String(bound) };
  return withApi(env, async (api) => {
    const fingerprint = await setup(api, 'archive');
    const name = (d: number, i: number) => `pkg:npm/${d.toString(36)}-${i.toString(36)}@1`;
    const docs: Array<[string, string]> = [];
    for (let d = 0; d < DOCUMENTS; d++) {
      docs.push([`sbom-${d}.cdx.json`, cyclonedx(Array.from({ length: VERSIONS }, (_, i) => name(d, i)))]);
    }
    const data = await tgz(docs);
    const a = await attest(api, 'archive', fingerprint, { name: 'evidence.tgz', data });
    const what = `${DOCUMENTS} SBOMs x ${VERSIONS.toLocaleString('en-US')} components in evidence.tgz (${mib(data.length)}), bound ${bound ?? '20000 (default)'}`;
    const indexed = bound ?? 20_000;
    log(
      line(`${what}, attestation`, a, `, ${((a.ms / indexed) * 1000).toFixed(1)} us per indexed component`),
    );
    const last = name(0, indexed - 1);
    const m = await measured(api, `/api/v2/exposure/${api.org}?purl=${encodeURIComponent(last)}`);
    log(line(`  exposure of the last indexed package`, m));
    return [
      {
        name: `attestation, ${what}`,
        value: `${a.ms.toFixed(0)} ms (/healthz max ${a.healthzMaxMs.toFixed(0)} ms, peak RSS ${a.peakRssMiB.toFixed(0)} MiB)`,
      },
    ];
  });
}

/** The figures of both cases; `log` prints each measurement. */
export async function exposureLimits(log: (line: string) => void = console.log): Promise<BenchFigure[]> {
  return [
    ...(await manyVersions(log)),
    ...(await archive(log, undefined)),
    ...(await archive(log, VERSIONS)),
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const figures = await exposureLimits();
  for (const f of figures) {
    console.log(`${f.name}: ${f.value}${f.target ? ` [${f.target}: ${f.pass ? 'ok' : 'MISSED'}]` : ''}`);
  }
}
