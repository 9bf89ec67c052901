/**
 * With the background workers (`VERITY_NOTIFIER_ENABLED`) and where no autovacuum runs (the
 * embedded database, a server with autovacuum off): a loop that keeps table statistics up to date
 * and the queues vacuumed, every minute, as autovacuum would (storage/statistics.ts).
 */
import fp from 'fastify-plugin';
import { Loop } from '../notify/loop.js';
import { analyzeChangedTables, autovacuumRuns, vacuumQueues } from '../storage/statistics.js';

/** Autovacuum's default naptime. */
const ANALYZE_INTERVAL_MS = 60_000;

export default fp(
  (app, _opts, done) => {
    if (!app.config.notifierEnabled) {
      return done();
    }
    // Asked on the first round, not at start: a database away then must not stop the app.
    let needed: boolean | undefined;
    const analyze = async () => {
      needed ??= !(await autovacuumRuns(app.db, app.dialect));
      if (!needed) {
        return;
      }
      const tables = await analyzeChangedTables(app.db);
      const vacuumed = await vacuumQueues(app.db);
      if (tables.length > 0 || vacuumed.length > 0) {
        // Debug: busy tables (the evidence change log, the log's queue) qualify every minute.
        app.log.debug({ tables, vacuumed }, 'table statistics updated, queues vacuumed');
      }
    };
    const loop = new Loop('table-statistics', analyze, ANALYZE_INTERVAL_MS, app.log);
    app.addHook('onReady', async () => loop.start());
    app.addHook('onClose', async () => loop.stop());
    done();
  },
  { name: 'statistics', dependencies: ['db'] },
);
