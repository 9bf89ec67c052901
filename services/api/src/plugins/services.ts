/**
 * The services every use case's scope carries (`app.services`, usecases/scope/services.ts): the
 * provenance port, the custom-type evaluator (a bounded worker pool), the evidence-file store,
 * (the database, or the S3-compatible object store of `VERITY_EVIDENCE_STORE=s3`),
 * the attestation batcher (one per database pool), the per-organization view cache and the
 * signed-evidence verifier (a worker pool, started by the first signed file); the evaluator,
 * verifier and batcher close with the app. With the background workers
 * (`VERITY_NOTIFIER_ENABLED`), a loop collects evidence files no attestation names, every ten
 * minutes, at most a thousand a pass, each pass reading only what was stored since the one before;
 * and the retention job (usecases/retention/retention-run.ts) runs every
 * `VERITY_RETENTION_INTERVAL_MS`, in batches with pauses between them.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Loop } from '../notify/loop.js';
import { AttestationBatcher } from '../storage/batching/attestation-batcher.js';
import type { EvidenceStore, Services } from '../usecases/scope/services.js';
import { CustomEvaluator } from '../workers/custom-evaluator.js';
import { SignatureVerifier } from '../workers/signature-verifier.js';
import { EvidenceCollector } from '../usecases/evidence/evidence-store.js';
import { configuredEvidenceStore } from '../object-store/configured-store.js';
import { runRetention } from '../usecases/retention/retention-run.js';

const COLLECT_INTERVAL_MS = 600_000;

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
  }
}

export default fp(
  (app, _opts, done) => {
    const evaluator = new CustomEvaluator({
      timeoutMs: app.config.jqTimeoutMs,
      maxHeapMb: app.config.jqMaxHeapMb,
      workers: app.config.jqWorkers,
      queuePerOrg: app.config.jqQueuePerOrg,
    });
    // A batch that committed re-evaluation marks says so, as every committed change does.
    const batcher = new AttestationBatcher(app.db, {
      onMarked: () => app.domainEvents.committed([{ type: 'reevaluation.marked', count: 1 }]),
    });
    // With a bucket configured, the database store still reads (and collects) files moved there.
    const { store, objects } = configuredEvidenceStore(
      app.config,
      app.log.child({ component: 'evidence-store' }),
    );
    if (store === objects) {
      app.addHook('onReady', async () => objects.probe());
    }
    const catalog = app.caches.config;
    const sbomLimits = {
      maxComponents: app.config.sbomMaxComponents,
      maxVersionsPerPackage: app.config.sbomMaxVersions,
    };
    const provenance = app.provenance;
    // Its worker starts with the first signed evidence file.
    const signatures = new SignatureVerifier({
      trustedRoot: app.config.sigstoreTrustedRoot,
      publicKeys: app.config.sigstorePublicKeys,
    });
    // Audit packages carry the log's proofs while the log runs.
    const log = app.config.transparencyLog
      ? {
          publicUrl: app.config.publicUrl,
          signingKeyPem: app.config.logSigningKey,
          encryptionSecret: app.config.encryptionSecret,
        }
      : undefined;
    app.decorate('services', {
      provenance,
      evaluator,
      store,
      batcher,
      catalog,
      sbomLimits,
      deploymentsDeferFrom: app.config.deploymentsDeferFrom,
      signatures,
      log,
    });
    const orphans = new EvidenceCollector(app.db, store);
    const collect = async () => {
      const n = await orphans.pass(app.clock());
      if (n > 0) {
        app.log.info({ collected: n }, 'evidence files no attestation names collected');
      }
    };
    const collector = new Loop('evidence-collector', collect, COLLECT_INTERVAL_MS, app.log);
    const retention = retentionLoop(app, store);
    if (app.config.notifierEnabled) {
      app.addHook('onReady', async () => {
        collector.start();
        retention.start();
      });
    }
    app.addHook('onClose', async () => {
      await retention.stop();
      await collector.stop();
      await batcher.close();
      await evaluator.close();
      await signatures.close();
      objects?.close();
    });
    done();
  },
  { name: 'services', dependencies: ['db', 'caches', 'provenance', 'domain-events'] },
);

/**
 * The retention job as a loop: each round removes what passed its period in every organization,
 * and logs what it removed; stopping it ends the round between two batches.
 */
function retentionLoop(app: FastifyInstance, store: EvidenceStore): { start(): void; stop(): Promise<void> } {
  let closing = false;
  const retain = async () => {
    const report = await runRetention({
      db: app.db,
      store,
      minimum: app.config.retentionMinimumDays,
      batchSize: app.config.retentionBatchSize,
      pauseMs: app.config.retentionPauseMs,
      clock: app.clock,
      runBy: 'retention',
      stopped: () => closing,
    });
    for (const o of report.orgs) {
      const removed = {
        trails: o.trails.length,
        attestations: o.attestations,
        evidence_files: o.evidence_files.length,
        snapshots: o.snapshots.length,
        audit_log: o.audit_log,
      };
      if (Object.values(removed).some((n) => n > 0)) {
        app.log.info({ org: o.org, ...removed }, 'retention removed records past their period');
      }
    }
  };
  const loop = new Loop('retention', retain, app.config.retentionIntervalMs, app.log);
  return {
    start: () => loop.start(),
    stop: async () => {
      closing = true;
      await loop.stop();
    },
  };
}
