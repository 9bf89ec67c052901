/**
 * The environment gauges: compliance of the latest snapshot, and the age of the last report and
 * of the latest snapshot per environment; and how long deferred deployments have waited. Read
 * from the database at scrape time, so every replica reports the same truth.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Gauge } from 'prom-client';
import { deploymentBackfillRepository } from '../storage/repositories/deployment-backfill.js';
import { environmentsRepository } from '../storage/repositories/environments.js';

type Overview = Awaited<ReturnType<typeof environmentsRepository.complianceOverview>>;

/**
 * One read of the overview for the gauges of one scrape (they collect together); a database that
 * does not answer leaves these series out rather than failing the whole scrape:
 * verity_database_available says why they are missing.
 */
function overviewReader(app: FastifyInstance): () => Promise<Overview> {
  let overview: { at: number; rows: Promise<Overview> } | undefined;
  return () => {
    const now = Date.now();
    if (!overview || now - overview.at > 1000) {
      overview = { at: now, rows: environmentsRepository.complianceOverview(app.db) };
      overview.rows.catch(() => (overview = undefined));
    }
    return overview.rows.catch(() => []);
  };
}

/** A gauge of the seconds since a time of each environment, absent where it has none. */
function ageGauge(
  app: FastifyInstance,
  read: () => Promise<Overview>,
  gauge: { name: string; help: string; since: 'last_reported_at' | 'latest_snapshot_at' },
): void {
  new Gauge({
    name: gauge.name,
    help: gauge.help,
    labelNames: ['org', 'environment'] as const,
    registers: [app.metrics.registry],
    async collect() {
      this.reset();
      const now = app.clock().getTime();
      for (const e of await read()) {
        const since = e[gauge.since];
        if (since) {
          this.set({ org: e.org, environment: e.name }, (now - since.getTime()) / 1000);
        }
      }
    },
  });
}

export default fp(
  async (app) => {
    const read = overviewReader(app);
    new Gauge({
      name: 'verity_environment_compliant',
      help: 'Compliance of the latest snapshot: 1 compliant, 0 not; absent when unknown (no policies)',
      labelNames: ['org', 'environment'] as const,
      registers: [app.metrics.registry],
      async collect() {
        this.reset();
        for (const e of await read()) {
          if (e.compliant !== null) {
            this.set({ org: e.org, environment: e.name }, e.compliant ? 1 : 0);
          }
        }
      },
    });
    ageGauge(app, read, {
      name: 'verity_environment_last_report_age_seconds',
      help: 'Seconds since the environment was last reported (a report without changes counts): a silent reporter shows here',
      since: 'last_reported_at',
    });
    new Gauge({
      name: 'verity_deployments_deferred_age_seconds',
      help: 'Seconds the oldest snapshot that deferred its deployments (VERITY_DEPLOYMENTS_DEFER_FROM) has waited for them to be recorded; 0 when none waits',
      registers: [app.metrics.registry],
      async collect() {
        const oldest = await deploymentBackfillRepository.oldestDeferred(app.db).catch(() => undefined);
        if (oldest === undefined) {
          // The database did not answer: the series is left out (verity_database_available says why).
          this.reset();
        } else {
          this.set(oldest ? Math.max(0, (app.clock().getTime() - oldest.getTime()) / 1000) : 0);
        }
      },
    });
    ageGauge(app, read, {
      name: 'verity_environment_snapshot_age_seconds',
      help: 'Seconds since the latest snapshot of the environment was made (how long what runs there has been unchanged)',
      since: 'latest_snapshot_at',
    });
  },
  { name: 'runtime-metrics', dependencies: ['db', 'metrics'] },
);
