/**
 * The evidence area's services: the custom-type evaluator (a bounded worker pool, closed with the
 * app) and the evidence-file store.
 */
import fp from 'fastify-plugin';
import { CustomEvaluator } from '../usecases/custom-evaluator.js';
import { databaseEvidenceStore, type EvidenceStore } from '../usecases/evidence-store.js';

declare module 'fastify' {
  interface FastifyInstance {
    evidence: { evaluator: CustomEvaluator; store: EvidenceStore };
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
    app.decorate('evidence', { evaluator, store: databaseEvidenceStore });
    app.addHook('onClose', async () => evaluator.close());
    done();
  },
  { name: 'evidence', dependencies: ['db'] },
);
