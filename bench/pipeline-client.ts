/**
 * The load side of the pipeline benchmark: a keep-alive HTTP client, requests built as the kosli
 * CLI builds them (multipart `data_json` plus an optional `attachment_file`), and latency per
 * request kind. It runs in the benchmark's process; the API runs in a child process.
 */
import http from 'node:http';
import { createHash, randomBytes } from 'node:crypto';

export interface Target {
  url: string;
  org: string;
  key: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

export interface Reply {
  status: number;
  body: string;
}

/** A request one connection of a load sends over and over (pipeline-baseline.ts `connectionLoad`). */
export interface ConnectionRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** One HTTP request on a kept-alive connection. */
export function send(
  target: Target,
  method: string,
  path: string,
  body?: { data: Buffer | string; contentType: string },
): Promise<Reply> {
  const u = new URL(target.url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: u.hostname,
        port: u.port,
        method,
        path,
        headers: {
          authorization: `Bearer ${target.key}`,
          'user-agent': 'Kosli/v2.38.0',
          'content-type': body?.contentType ?? 'application/json; charset=utf-8',
          ...(body ? { 'content-length': Buffer.byteLength(body.data) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (body) {
      req.write(body.data);
    }
    req.end();
  });
}

/** A multipart body as Go's mime/multipart writes it: JSON fields, then at most one file. */
export function multipart(
  fields: Record<string, unknown>,
  file?: { name: string; filename: string; data: Buffer },
): { data: Buffer; contentType: string } {
  const boundary = randomBytes(30).toString('hex');
  const parts: Buffer[] = Object.entries(fields).map(([name, value]) =>
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${JSON.stringify(value)}\r\n`,
    ),
  );
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.name}"; filename="${file.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      file.data,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { data: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

export const json = (value: unknown) => ({
  data: JSON.stringify(value),
  contentType: 'application/json; charset=utf-8',
});

/** Latencies (ms) of the requests of each kind, and the failures. */
export class Recorder {
  readonly latencies = new Map<string, number[]>();
  readonly failures = new Map<string, { count: number; sample: string }>();

  async time(
    kind: string,
    run: () => Promise<Reply>,
    ok = (s: number) => s === 200 || s === 201,
  ): Promise<Reply> {
    const started = performance.now();
    const reply = await run();
    const ms = performance.now() - started;
    if (ok(reply.status)) {
      let list = this.latencies.get(kind);
      if (!list) {
        this.latencies.set(kind, (list = []));
      }
      list.push(ms);
    } else {
      const f = this.failures.get(kind) ?? {
        count: 0,
        sample: `${reply.status} ${reply.body.slice(0, 200)}`,
      };
      f.count += 1;
      this.failures.set(kind, f);
    }
    return reply;
  }

  /** Requests that failed, of every kind. */
  failed(): number {
    return [...this.failures.values()].reduce((n, f) => n + f.count, 0);
  }

  count(kind?: string): number {
    if (kind) {
      return this.latencies.get(kind)?.length ?? 0;
    }
    return [...this.latencies.values()].reduce((n, l) => n + l.length, 0);
  }

  /** p50 and p99 of one kind (ms), or of every kind together. */
  percentiles(kind?: string): { p50: number; p99: number } {
    const all = kind ? (this.latencies.get(kind) ?? []) : [...this.latencies.values()].flat();
    const sorted = [...all].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
    return { p50: at(0.5), p99: at(0.99) };
  }
}

/** Runs `worker(i)` on `connections` callers in a loop until `seconds` have passed; returns the elapsed seconds. */
export async function forDuration(
  connections: number,
  seconds: number,
  worker: (caller: number, round: number) => Promise<void>,
): Promise<number> {
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async (_, caller) => {
      for (let round = 0; performance.now() < until; round++) {
        await worker(caller, round);
      }
    }),
  );
  return (performance.now() - started) / 1000;
}

export const fingerprintOf = (s: string) => createHash('sha256').update(s).digest('hex');

export const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
export const ms = (n: number) => (n < 10 ? n.toFixed(1) : Math.round(n).toString());
