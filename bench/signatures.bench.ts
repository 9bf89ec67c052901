/**
 * Signed evidence: the CPU one verification costs, in process, next to one ECDSA P-256 signature
 * check of the same run (the baseline: the least any verification does); and how long the event
 * loop stalls while the API's worker pool verifies bundles (the reason verification runs there).
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

  // The pool: the event loop's longest stall while it verifies RUNS bundles, 8 at a time.
  const pool = new SignatureVerifier({ trustedRoot: trustedRoot(), publicKeys: publicKeys() });
  await pool.verify('bench', bundleFile, FP);
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const start = process.hrtime.bigint();
  for (let i = 0; i < RUNS; i += 8) {
    await Promise.all(Array.from({ length: 8 }, () => pool.verify('bench', bundleFile, FP)));
  }
  const poolMs = Number(process.hrtime.bigint() - start) / 1e6 / RUNS;
  delay.disable();
  await pool.close();
  const stallMs = delay.max / 1e6;
  ctx.log(`pool: ${poolMs.toFixed(2)} ms per bundle; longest event-loop stall ${stallMs.toFixed(1)} ms`);
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
      name: 'event-loop stall while the pool verifies bundles (x one in-process bundle)',
      value: `${(stallMs / bundleMs).toFixed(2)}x (${stallMs.toFixed(1)} ms vs ${bundleMs.toFixed(2)} ms)`,
      target: '< 1x: verification never holds the event loop for as long as one bundle takes',
      pass: stallMs < bundleMs,
    },
  ];
}
