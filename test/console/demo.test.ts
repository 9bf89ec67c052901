/** The demo seeding's own rules, without a browser: it never writes into an existing organization. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../services/api/src/app.js';
import { DemoClock, DemoOrgExistsError, junitResults, seedDemo } from '../../services/api/src/demo/seed.js';
import { newId } from '../../services/api/src/ids.js';
import type { DatabaseHandle } from '../../services/api/src/storage/create-db.js';
import { orgsRepository } from '../../services/api/src/storage/repositories/orgs.js';
import { testConfig } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/database.js';

const FIXTURES = join(import.meta.dirname, '..', '..', 'services', 'api', 'src', 'demo', 'fixtures');

describe('the demo seeding', () => {
  let db: DatabaseHandle;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db?.close());

  it('refuses an organization that already exists and changes nothing in it', async () => {
    const clock = new DemoClock();
    const app = await buildApp({ config: testConfig(), database: db, clock: clock.now, logger: false });
    try {
      const { org } = await orgsRepository.ensure(db.db, { id: newId(), name: 'acme', display_name: 'Acme' });
      await expect(seedDemo({ app, db: db.db, clock, org: 'acme' })).rejects.toBeInstanceOf(
        DemoOrgExistsError,
      );
      const accounts = await db.db
        .selectFrom('service_accounts')
        .select('name')
        .where('org_id', '=', org.id)
        .execute();
      expect(accounts).toEqual([]);
      // the clock was handed back: the server keeps the real time
      expect(Math.abs(clock.now().getTime() - Date.now())).toBeLessThan(60_000);
    } finally {
      await app.close();
    }
  });

  it('reads JUnit XML as `kosli attest junit` does: one result per test suite', () => {
    expect(junitResults(readFileSync(join(FIXTURES, 'report_junit_delta_timestamp.xml'), 'utf8'))).toEqual([
      expect.objectContaining({ name: 'src/components/TodoApp.integration.test.tsx', total: 1, failures: 0 }),
      expect.objectContaining({ name: 'src/components/TodoApp.test.tsx', total: 4, skipped: 0 }),
    ]);
    expect(
      junitResults(readFileSync(join(FIXTURES, 'surefire_maven_ancient_junit_report.xml'), 'utf8')),
    ).toEqual([expect.objectContaining({ total: 7, skipped: 5, failures: 0, errors: 0, duration: 5.513 })]);
    expect(junitResults(readFileSync(join(FIXTURES, 'payments-failing-junit.xml'), 'utf8'))).toEqual([
      expect.objectContaining({ name: 'refunds.RefundServiceTest', total: 18, failures: 2 }),
      expect.objectContaining({ name: 'ledger.LedgerTest', total: 24, skipped: 1 }),
    ]);
  });
});
