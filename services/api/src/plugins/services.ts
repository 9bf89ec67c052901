/**
 * The services every use case's scope carries (`app.services`, usecases/scope/services.ts): the
 * provenance port, the custom-type evaluator (a bounded worker pool), the evidence-file store,
 * the attestation batcher (one per database pool) and the per-organization view cache; the
 * evaluator and batcher close with the app. With the background workers
 * (`VERITY_NOTIFIER_ENABLED`), a loop collects evidence files no attestation names, every ten
 * minutes, at most a thousand a pass, each pass reading only what was stored since the one before.
 */
import fp from 'fastify-plugin';
import { Loop } from '../notify/loop.js';
import { AttestationBatcher } from '../storage/batching/attestation-batcher.js';
import type { Services } from '../usecases/scope/services.js';
import { CustomEvaluator } from '../workers/custom-evaluator.js';
import { databaseEvidenceStore, EvidenceCollector } from '../usecases/evidence/evidence-store.js';

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
    const store = databaseEvidenceStore;
    const catalog = app.caches.config;
    const sbomLimits = {
      maxComponents: app.config.sbomMaxComponents,
      maxVersionsPerPackage: app.config.sbomMaxVersions,
    };
    const provenance = app.provenance;
    // Audit packages carry the log's proofs while the log runs.
    const log = app.config.transparencyLog
      ? { publicUrl: app.config.publicUrl, signingKeyPem: app.config.logSigningKey }
      : undefined;
    app.decorate('services', { provenance, evaluator, store, batcher, catalog, sbomLimits, log });
    const orphans = new EvidenceCollector(app.db, store);
    const collect = async () => {
      const n = await orphans.pass(app.clock());
      if (n > 0) {
        app.log.info({ collected: n }, 'evidence files no attestation names collected');
      }
    };
    const collector = new Loop('evidence-collector', collect, COLLECT_INTERVAL_MS, app.log);
    if (app.config.notifierEnabled) {
      app.addHook('onReady', async () => collector.start());
    }
    app.addHook('onClose', async () => {
      await collector.stop();
      await batcher.close();
      await evaluator.close();
    });
    done();
  },
  { name: 'services', dependencies: ['db', 'caches', 'provenance', 'domain-events'] },
);
