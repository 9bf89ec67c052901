/**
 * The evidence area's services: the custom-type evaluator (a bounded worker pool), the
 * evidence-file store and the attestation batcher (one per database pool), the first and last
 * closed with the app. With the background workers (`VERITY_NOTIFIER_ENABLED`), a loop collects
 * evidence files no attestation names, every ten minutes, at most a thousand a pass, each pass
 * reading only what was stored since the one before.
 */
import fp from 'fastify-plugin';
import { Loop } from '../notify/loop.js';
import { AttestationBatcher } from '../storage/batching/attestation-batcher.js';
import type { AttestationServices } from '../usecases/evidence/attestations.js';
import { CustomEvaluator } from '../workers/custom-evaluator.js';
import { databaseEvidenceStore, EvidenceCollector } from '../usecases/evidence/evidence-store.js';

const COLLECT_INTERVAL_MS = 600_000;

declare module 'fastify' {
  interface FastifyInstance {
    evidence: AttestationServices;
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
    // Marks a batch committed wake the re-evaluation worker, as the subscriber's do.
    const batcher = new AttestationBatcher(app.db, {
      onMarked: () => (app.hasDecorator('runtime') ? app.runtime.kick() : undefined),
    });
    const store = databaseEvidenceStore;
    app.decorate('evidence', { evaluator, store, batcher, catalog: app.caches.config });
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
  { name: 'evidence', dependencies: ['db', 'caches'] },
);
