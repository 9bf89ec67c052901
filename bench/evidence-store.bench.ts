/**
 * `npm run bench -- evidence-store`: evidence files of 1, 10 and 100 MiB uploaded and downloaded
 * through the API with the S3-compatible object store (s3rver, in the benchmark's process, on a
 * free port), against the store's own PutObject and GetObject of the same bytes in the same run.
 * The API runs as in production (`services/api/src/main.ts` in its own process, embedded
 * database), and its resident memory is sampled from /proc during each transfer.
 *
 * An upload is what the kosli CLI sends: a multipart attestation (data_json, attachment_file),
 * streamed from a file. A download reads the attestation's file to the end and checks its sum.
 * Target: the API's peak memory stays flat as the file grows (100 MiB within 32 MiB of 1 MiB).
 * `BENCH_EVIDENCE_SIZES_MIB` (default 1,10,100) and `BENCH_EVIDENCE_REPS` (default 3; 1 for
 * files of 100 MiB and more) change the workload.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  createReadStream,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  openSync,
  writeSync,
  closeSync,
} from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import type { BenchContext, BenchFigure } from './harness.js';

const MIB = 1024 * 1024;
const BUCKET = 'verity-bench';
const FLAT_MIB = 32;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
      .once('error', reject)
      .listen(0, '127.0.0.1', () => {
        const port = (srv.address() as { port: number }).port;
        srv.close(() => resolve(port));
      });
  });
}

/** Resident memory of a process, from /proc (Linux). */
function rssBytes(pid: number): number {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return line ? Number(line[1]) * 1024 : 0;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Writes `mib` MiB of random bytes; returns their sha256. */
function writeRandomFile(path: string, mib: number): string {
  const hash = createHash('sha256');
  const fd = openSync(path, 'w');
  try {
    for (let i = 0; i < mib; i++) {
      const chunk = randomBytes(MIB);
      hash.update(chunk);
      writeSync(fd, chunk);
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

/** An HTTP request with a streamed body; resolves with the status and the body (read, or drained and summed). */
function send(
  url: string,
  opts: { method: string; headers: Record<string, string>; body?: Readable; keep?: boolean },
): Promise<{ status: number; text: string; bytes: number; sha256: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method, headers: opts.headers }, (res) => {
      const hash = createHash('sha256');
      const kept: Buffer[] = [];
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        hash.update(chunk);
        if (opts.keep) {
          kept.push(chunk);
        }
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          text: Buffer.concat(kept).toString(),
          bytes,
          sha256: hash.digest('hex'),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    if (opts.body) {
      opts.body.pipe(req);
    } else {
      req.end();
    }
  });
}

/** The multipart body of an attestation with its file, as Go's mime/multipart writes it, streamed. */
function attestationBody(
  name: string,
  file: string,
  size: number,
): { body: Readable; headers: Record<string, string> } {
  const boundary = randomBytes(30).toString('hex');
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="data_json"\r\n\r\n` +
      JSON.stringify({ attestation_name: name, is_compliant: true, user_data: {} }) +
      `\r\n--${boundary}\r\nContent-Disposition: form-data; name="attachment_file"; filename="${name}.bin"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const body = new PassThrough();
  body.write(head);
  const stream = createReadStream(file);
  stream.on('end', () => body.end(tail));
  stream.pipe(body, { end: false });
  return {
    body,
    headers: {
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(head.length + size + tail.length),
    },
  };
}

/** Samples a process's resident memory until stopped; returns the peak. */
function sampleRss(pid: number): { stop(): Promise<number> } {
  let peak = rssBytes(pid);
  let on = true;
  const loop = (async () => {
    while (on) {
      peak = Math.max(peak, rssBytes(pid));
      await sleep(10);
    }
  })();
  return {
    async stop() {
      on = false;
      await loop;
      return Math.max(peak, rssBytes(pid));
    },
  };
}

export default async function run(ctx: BenchContext): Promise<BenchFigure[]> {
  const log = (line: string) => ctx.log(line);
  const sizes = (process.env.BENCH_EVIDENCE_SIZES_MIB ?? '1,10,100').split(',').map(Number);
  const reps = Number(process.env.BENCH_EVIDENCE_REPS ?? 3);
  const dir = mkdtempSync(join(tmpdir(), 'verity-bench-evidence-store-'));
  const s3dir = join(dir, 's3');
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    directory: s3dir,
    silent: true,
    configureBuckets: [{ name: BUCKET }],
  });
  const { port: s3Port } = await server.run();
  const endpoint = `http://127.0.0.1:${s3Port}`;
  const s3 = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const key = `vty_bench-${randomBytes(16).toString('hex')}`;
  const maxMib = Math.max(...sizes);
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', join('services', 'api', 'src', 'main.ts')], {
    env: {
      ...process.env,
      DATABASE_URL: '',
      VERITY_DATA_DIR: join(dir, 'data'),
      PORT: String(port),
      HOST: '127.0.0.1',
      VERITY_METRICS_PORT: '0',
      LOG_LEVEL: 'warn',
      VERITY_BOOTSTRAP_ORG: 'bench',
      VERITY_BOOTSTRAP_API_KEY: key,
      VERITY_RATE_LIMIT_PER_MINUTE: '0',
      VERITY_UPLOAD_LIMIT_BYTES: String((maxMib + 1) * MIB),
      VERITY_EVIDENCE_MAX_BYTES: String((maxMib + 1) * MIB),
      VERITY_EVIDENCE_STORE: 's3',
      VERITY_S3_BUCKET: BUCKET,
      VERITY_S3_PREFIX: 'evidence',
      VERITY_S3_ENDPOINT: endpoint,
      VERITY_S3_REGION: 'us-east-1',
      VERITY_S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const figures: BenchFigure[] = [];
  try {
    const url = `http://127.0.0.1:${port}`;
    const auth = { authorization: `Bearer ${key}` };
    for (let i = 0; ; i++) {
      const ready = await fetch(`${url}/readyz`).catch(() => undefined);
      if (ready?.status === 200) {
        break;
      }
      if (i > 600 || child.exitCode !== null) {
        throw new Error('the API did not get ready');
      }
      await sleep(200);
    }
    const json = { ...auth, 'content-type': 'application/json; charset=utf-8' };
    await fetch(`${url}/api/v2/flows/bench`, {
      method: 'PUT',
      headers: json,
      body: JSON.stringify({ name: 'files', description: '' }),
    });
    await fetch(`${url}/api/v2/trails/bench/files`, {
      method: 'PUT',
      headers: json,
      body: JSON.stringify({ name: 't' }),
    });

    // Warm: one small file each way, so the first measured transfer pays no start-up.
    const warm = join(dir, 'warm.bin');
    writeFileSync(warm, randomBytes(64 * 1024));
    const w = attestationBody('warm', warm, 64 * 1024);
    await send(`${url}/api/v2/attestations/bench/files/trail/t/generic`, {
      method: 'POST',
      headers: { ...auth, ...w.headers },
      body: w.body,
    });
    await sleep(1_000);
    const before = rssBytes(child.pid!);
    log(`API RSS settled at ${(before / MIB).toFixed(0)} MiB`);

    const growth = new Map<number, number>();
    let attestation = 0;
    for (const mib of sizes) {
      const file = join(dir, `f${mib}.bin`);
      let current = writeRandomFile(file, mib);
      const size = statSync(file).size;
      const n = mib >= 100 ? 1 : reps;
      const times = { put: [] as number[], get: [] as number[], up: [] as number[], down: [] as number[] };
      let peak = 0;
      for (let r = 0; r < n; r++) {
        // The store's own PutObject and GetObject of the same bytes.
        let t0 = performance.now();
        await s3.send(
          new PutObjectCommand({
            Bucket: BUCKET,
            Key: `direct/${mib}-${r}`,
            Body: createReadStream(file),
            ContentLength: size,
          }),
        );
        times.put.push(performance.now() - t0);
        t0 = performance.now();
        const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: `direct/${mib}-${r}` }));
        const direct = createHash('sha256');
        for await (const chunk of got.Body as Readable) {
          direct.update(chunk as Buffer);
        }
        times.get.push(performance.now() - t0);
        if (direct.digest('hex') !== current) {
          throw new Error('GetObject returned other bytes');
        }

        // Through the API: a new attestation name each time, so every upload stores a new object.
        const name = `file${++attestation}`;
        // A different file per repetition: the same bytes again would be found stored already.
        if (r > 0) {
          current = writeRandomFile(file, mib);
        }
        const fileSha = current;
        const sampler = sampleRss(child.pid!);
        t0 = performance.now();
        const up = attestationBody(name, file, size);
        const posted = await send(`${url}/api/v2/attestations/bench/files/trail/t/generic`, {
          method: 'POST',
          headers: { ...auth, ...up.headers },
          body: up.body,
          keep: true,
        });
        times.up.push(performance.now() - t0);
        if (posted.status !== 201) {
          throw new Error(`upload answered ${posted.status}: ${posted.text}`);
        }
        const listed = await fetch(`${url}/api/v2/attestations/bench/files/trail/t/${name}`, {
          headers: auth,
        });
        const [att] = (await listed.json()) as Array<{ evidence_file: { download_url: string } }>;
        t0 = performance.now();
        const down = await send(`${url}${new URL(att!.evidence_file.download_url).pathname}`, {
          method: 'GET',
          headers: auth,
        });
        times.down.push(performance.now() - t0);
        peak = Math.max(peak, await sampler.stop());
        if (down.status !== 200 || down.sha256 !== fileSha || down.bytes !== size) {
          throw new Error(`download answered ${down.status} with ${down.bytes} bytes`);
        }
      }
      const rate = (ms: number) => mib / (ms / 1000);
      const [put, get, upMs, downMs] = [
        median(times.put),
        median(times.get),
        median(times.up),
        median(times.down),
      ];
      growth.set(mib, (peak - before) / MIB);
      log(
        `${mib} MiB (median of ${n}): upload ${rate(upMs).toFixed(0)} MiB/s vs PutObject ${rate(put).toFixed(0)} MiB/s; ` +
          `download ${rate(downMs).toFixed(0)} MiB/s vs GetObject ${rate(get).toFixed(0)} MiB/s; ` +
          `API peak RSS ${(peak / MIB).toFixed(0)} MiB (+${((peak - before) / MIB).toFixed(0)} MiB)`,
      );
      figures.push(
        {
          name: `upload ${mib} MiB through the API / PutObject`,
          value: `${(put / upMs).toFixed(2)} (${rate(upMs).toFixed(0)} vs ${rate(put).toFixed(0)} MiB/s)`,
        },
        {
          name: `download ${mib} MiB through the API / GetObject`,
          value: `${(get / downMs).toFixed(2)} (${rate(downMs).toFixed(0)} vs ${rate(get).toFixed(0)} MiB/s)`,
        },
        { name: `API peak RSS growth, ${mib} MiB file`, value: `${((peak - before) / MIB).toFixed(1)} MiB` },
      );
    }
    const smallest = Math.min(...sizes);
    const largest = Math.max(...sizes);
    const flat = growth.get(largest)! - growth.get(smallest)!;
    figures.push({
      name: `API peak RSS, ${largest} MiB file minus ${smallest} MiB file`,
      value: `${flat.toFixed(1)} MiB`,
      target: `< ${FLAT_MIB} MiB`,
      pass: flat < FLAT_MIB,
    });
    return figures;
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    s3.destroy();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
