/**
 * What one request costs everyone else: `measureUnderLoad(serverUrl, fn)` runs `fn` while a
 * worker thread (its own event loop, so a blocked API thread cannot delay the pings themselves)
 * sends `GET /healthz` every 50 ms and samples the process's resident memory. A ping is sent on
 * every tick, whether or not the previous one was answered, so a stall of the API shows as the
 * latency of the ping that waited through it. With a `pid`, the memory sampled is that process's
 * (an API in a child process), read from `/proc/<pid>/status`. Shared by the sections of
 * `limits.bench.ts`.
 */
import { Worker } from 'node:worker_threads';

export interface UnderLoad<T> {
  result: T;
  /** Wall time of `fn`, in milliseconds. */
  ms: number;
  /** The longest `/healthz` answer seen while `fn` ran (and the pings it left in flight). */
  maxHealthzMs: number;
  /** `/healthz` pings answered during the measurement. */
  pings: number;
  /** The largest resident set size sampled during the measurement, in bytes. */
  peakRssBytes: number;
}

export const PING_INTERVAL_MS = 50;

const PINGER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const fs = require('node:fs');
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const rss = () => {
  if (!workerData.pid) return process.memoryUsage.rss();
  const m = /VmRSS:\\s+(\\d+) kB/.exec(fs.readFileSync('/proc/' + workerData.pid + '/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
};
let max = 0, answered = 0, inFlight = 0, peakRss = rss(), stopping = false;
const ping = () => {
  const start = process.hrtime.bigint();
  inFlight += 1;
  const done = () => {
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (ms > max) max = ms;
    answered += 1;
    inFlight -= 1;
    finish();
  };
  http.get(workerData.url + '/healthz', { agent }, (res) => { res.resume(); res.on('end', done); }).on('error', done);
};
const finish = () => {
  if (stopping && inFlight === 0) {
    clearInterval(timer);
    agent.destroy();
    parentPort.postMessage({ max, answered, peakRss });
  }
};
const timer = setInterval(() => {
  peakRss = Math.max(peakRss, rss());
  if (!stopping) ping();
}, workerData.interval);
ping();
parentPort.on('message', () => { stopping = true; finish(); });
`;

/**
 * Runs `fn` while `/healthz` of `serverUrl` is pinged every 50 ms from a worker thread; memory is
 * sampled from process `pid`, or this one.
 */
export async function measureUnderLoad<T>(
  serverUrl: string,
  fn: () => Promise<T>,
  pid?: number,
): Promise<UnderLoad<T>> {
  const worker = new Worker(PINGER, {
    eval: true,
    workerData: { url: serverUrl, interval: PING_INTERVAL_MS, pid },
  });
  const report = new Promise<{ max: number; answered: number; peakRss: number }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await new Promise((resolve) => worker.once('online', resolve));
  const start = process.hrtime.bigint();
  let result: T;
  try {
    result = await fn();
  } finally {
    worker.postMessage('stop');
  }
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const seen = await report;
  await worker.terminate();
  return { result, ms, maxHealthzMs: seen.max, pings: seen.answered, peakRssBytes: seen.peakRss };
}
