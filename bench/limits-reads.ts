/**
 * Reads that cost what they show: GET artifact by fingerprint, and GET trail, with 10, 1,000 and
 * 40,000 attestations of a few names reported to it, as the CLI sends them (`kosli attest generic
 * --fingerprint`, multipart `data_json`), on PostgreSQL. Prints per size the request time (p50,
 * p99 of REQUESTS sequential requests), the cost per attestation, and the ratio of p50 to the
 * 10-attestation case. Target: 40,000 answered in under 50 ms, as with 10.
 *
 * Run: `npx tsx bench/limits-reads.ts` (BENCH_DATABASE_URL as for `npm run bench`).
 * The answer's `history` holds the artifact's first event and its 100 most recent, with
 * `history_total` counting them all, so its size stays the same from 1,000 attestations on.
 */
import { createHash, randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { startApi, type BenchFigure, type RunningApi } from './harness.js';

const SIZES = [10, 1_000, 40_000];
const NAMES = ['unit', 'lint', 'scan', 'sbom'];
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 50);
/** Attestations in flight while seeding. */
const SEED_CONCURRENCY = 8;
const CLI_HEADERS = { 'user-agent': 'Kosli/v2.38.0' };

/** A body as the CLI's Go multipart writer builds it: one `data_json` part. */
function multipart(dataJson: unknown): { body: Buffer; contentType: string } {
  const boundary = randomBytes(30).toString('hex');
  const body =
    `--${boundary}\r\nContent-Disposition: form-data; name="data_json"\r\n\r\n` +
    `${JSON.stringify(dataJson)}\r\n--${boundary}--\r\n`;
  return { body: Buffer.from(body), contentType: `multipart/form-data; boundary=${boundary}` };
}

async function must(res: Response, what: string): Promise<void> {
  if (res.status >= 300) {
    throw new Error(`${what}: ${res.status} ${await res.text()}`);
  }
}

/** A trail holding one artifact with `count` attestations, cycling through NAMES. */
async function seedArtifact(api: RunningApi, trail: string, count: number): Promise<string> {
  const auth = { ...CLI_HEADERS, authorization: `Bearer ${api.key}` };
  const json = { ...auth, 'content-type': 'application/json; charset=utf-8' };
  const fp = createHash('sha256').update(`artifact ${trail}`).digest('hex');
  await must(
    await fetch(`${api.url}/api/v2/trails/${api.org}/reads`, {
      method: 'PUT',
      headers: json,
      body: JSON.stringify({ name: trail }),
    }),
    'trail',
  );
  await must(
    await fetch(`${api.url}/api/v2/artifacts/${api.org}/reads`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        fingerprint: fp,
        filename: 'backend',
        build_url: 'https://ci/1',
        commit_url: 'https://git/1',
        trail_name: trail,
      }),
    }),
    'artifact',
  );
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const form = multipart({
        artifact_fingerprint: fp,
        attestation_name: NAMES[i % NAMES.length],
        is_compliant: i % 7 !== 0,
        origin_url: `https://ci/run/${i}`,
        user_data: {},
      });
      await must(
        await fetch(`${api.url}/api/v2/attestations/${api.org}/reads/trail/${trail}/generic`, {
          method: 'POST',
          headers: { ...auth, 'content-type': form.contentType },
          body: form.body,
        }),
        'attest',
      );
    }
  };
  await Promise.all(Array.from({ length: SEED_CONCURRENCY }, worker));
  return fp;
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;

/** Times of REQUESTS sequential GETs of `url` (after two unmeasured ones), in ms, sorted. */
async function timeGets(api: RunningApi, url: string): Promise<{ times: number[]; bytes: number }> {
  const headers = {
    ...CLI_HEADERS,
    authorization: `Bearer ${api.key}`,
    'content-type': 'application/json; charset=utf-8',
  };
  let bytes = 0;
  const times: number[] = [];
  for (let i = 0; i < REQUESTS + 2; i++) {
    const start = performance.now();
    const res = await fetch(url, { headers });
    const body = await res.arrayBuffer();
    const ms = performance.now() - start;
    if (res.status !== 200) {
      throw new Error(`GET ${url}: ${res.status}`);
    }
    bytes = body.byteLength;
    if (i >= 2) {
      times.push(ms);
    }
  }
  return { times: times.sort((a, b) => a - b), bytes };
}

/** The figures of GET artifact at each size in SIZES; `log` prints progress and the table. */
export async function artifactReadLimits(log: (line: string) => void = console.log): Promise<BenchFigure[]> {
  // Without the read cache: each request reads and presents the artifact, as while evidence
  // arrives (every write to the organization empties its cache).
  const api = await startApi({ postgres: true, env: { VERITY_READ_CACHE_ENTRIES: '0' } });
  const figures: BenchFigure[] = [];
  try {
    await must(
      await fetch(`${api.url}/api/v2/flows/${api.org}`, {
        method: 'PUT',
        headers: {
          ...CLI_HEADERS,
          authorization: `Bearer ${api.key}`,
          'content-type': 'application/json; charset=utf-8',
        },
        body: JSON.stringify({ name: 'reads', description: 'read limits' }),
      }),
      'flow',
    );
    const fps: string[] = [];
    for (const size of SIZES) {
      const started = performance.now();
      fps.push(await seedArtifact(api, `t${size}`, size));
      log(`seeded ${size} attestations in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
    for (const what of ['artifact', 'trail'] as const) {
      let base = 0;
      for (const [i, size] of SIZES.entries()) {
        const url =
          what === 'artifact'
            ? `${api.url}/api/v2/artifacts/${api.org}/reads/fingerprint/${fps[i]!}`
            : `${api.url}/api/v2/trails/${api.org}/reads/t${size}`;
        const { times, bytes } = await timeGets(api, url);
        const p50 = quantile(times, 0.5);
        const p99 = quantile(times, 0.99);
        base = i === 0 ? p50 : base;
        const line =
          `GET ${what}, ${size} attestations: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, ` +
          `${((p50 / size) * 1000).toFixed(1)} us per attestation, ${(p50 / base).toFixed(2)}x the 10 case, ` +
          `answer ${bytes.toLocaleString('en-US')} bytes`;
        log(line);
        figures.push({
          name: `GET ${what}, ${size.toLocaleString('en-US')} attestations (p50, p99)`,
          value: `${p50.toFixed(1)} ms, ${p99.toFixed(1)} ms (${(p50 / base).toFixed(2)}x; ${bytes} bytes)`,
          target: '< 50 ms',
          pass: p50 < 50,
        });
      }
    }
  } finally {
    await api.close();
  }
  return figures;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await artifactReadLimits();
}
