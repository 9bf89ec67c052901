/**
 * Signed evidence: the CPU one verification costs, in process, next to one ECDSA P-256 signature
 * check of the same run (the baseline: the least any verification does); and the event loop's
 * longest stall while bundles are verified through the API's worker pool, next to the same work
 * in the loop's own thread (the reason verification runs in the pool) and to an idle loop.
 * Bundles and envelopes come from the private trust material of test/fixtures/sigstore.
 */
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { BenchContext, BenchFigure } from './harness.js';
import { buildSignatureTrust, verifySignedEvidence } from '../services/api/src/workers/signed-evidence.mjs';
import { SignatureVerifier } from '../services/api/src/workers/signature-verifier.js';
import { bundle, envelope, publicKeys, statement, trustedRoot } from '../test/helpers/sigstore.js';

const RUNS = 300;
const FP = 'a'.repeat(64);

function msPer(runs: number, f: () => unknown): number {
  for (let i = 0; i < 20; i++) {
    f();
  }
  const start = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) {
    f();
  }
  return Number(process.hrtime.bigint() - start) / 1e6 / runs;
}

export default async function run(ctx: BenchContext): Promise<BenchFigure[]> {
  const trust = buildSignatureTrust(trustedRoot(), publicKeys());
  const bundleFile = {
    filename: 'provenance.sigstore.json',
    data: Buffer.from(JSON.stringify(bundle(statement(FP)))),
  };
  const dsseFile = {
    filename: 'statement.intoto.json',
    data: Buffer.from(JSON.stringify(envelope(statement(FP)))),
  };
  const key = readFileSync(join(import.meta.dirname, '../test/fixtures/sigstore/signing.key'), 'utf8');
  const signature = sign('sha256', bundleFile.data, createPrivateKey(key));
  const publicKey = createPublicKey(key);
  const baseline = msPer(RUNS, () => verify('sha256', bundleFile.data, publicKey, signature));
  const bundleMs = msPer(RUNS, () => verifySignedEvidence(trust, bundleFile, FP));
  const dsseMs = msPer(RUNS, () => verifySignedEvidence(trust, dsseFile, FP));
  ctx.log(
    `one ECDSA P-256 check: ${baseline.toFixed(3)} ms; bundle: ${bundleMs.toFixed(2)} ms; keyed DSSE: ${dsseMs.toFixed(2)} ms`,
  );

  // The event loop's longest stall while RUNS bundles are verified, 8 at a time: in the
  // request's thread (as without the pool), then through the pool, then idle for as long.
  const stall = async (
    verifyOne: () => Promise<unknown>,
  ): Promise<{ stallMs: number; elapsedMs: number }> => {
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const begin = process.hrtime.bigint();
    for (let i = 0; i < RUNS; i += 8) {
      await Promise.all(Array.from({ length: 8 }, verifyOne));
      // A turn of the loop, so that the histogram sees how late it comes.
      await new Promise((resolve) => setImmediate(resolve));
    }
    const elapsedMs = Number(process.hrtime.bigint() - begin) / 1e6;
    delay.disable();
    return { stallMs: delay.max / 1e6, elapsedMs };
  };
  const inline = await stall(async () => verifySignedEvidence(trust, bundleFile, FP));
  const pool = new SignatureVerifier({ trustedRoot: trustedRoot(), publicKeys: publicKeys() });
  await pool.verify('bench', bundleFile, FP);
  const pooled = await stall(() => pool.verify('bench', bundleFile, FP));
  await pool.close();
  const idle = monitorEventLoopDelay({ resolution: 1 });
  idle.enable();
  await new Promise((resolve) => setTimeout(resolve, pooled.elapsedMs));
  idle.disable();
  const idleMs = idle.max / 1e6;
  const stallMs = pooled.stallMs;
  ctx.log(
    `longest event-loop stall: ${inline.stallMs.toFixed(1)} ms in process, ${stallMs.toFixed(1)} ms through the pool ` +
      `(${(pooled.elapsedMs / RUNS).toFixed(2)} ms per bundle), ${idleMs.toFixed(1)} ms idle`,
  );
  return [
    {
      name: 'bundle verification, in process (x one ECDSA check)',
      value: `${(bundleMs / baseline).toFixed(0)}x (${bundleMs.toFixed(2)} ms vs ${baseline.toFixed(3)} ms)`,
    },
    {
      name: 'keyed DSSE verification, in process (x one ECDSA check)',
      value: `${(dsseMs / baseline).toFixed(0)}x (${dsseMs.toFixed(2)} ms vs ${baseline.toFixed(3)} ms)`,
    },
    {
      name: 'longest event-loop stall, pool vs in process (300 bundles, 8 at a time)',
      value: `${(stallMs / inline.stallMs).toFixed(2)}x (${stallMs.toFixed(1)} ms vs ${inline.stallMs.toFixed(1)} ms; idle ${idleMs.toFixed(1)} ms)`,
      target: '< 0.5x',
      pass: stallMs < inline.stallMs * 0.5,
    },
  ];
}
