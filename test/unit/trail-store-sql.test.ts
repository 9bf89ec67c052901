/**
 * The trail store's one write as SQL, checked in for review
 * (services/api/src/storage/trail-store/queries/insert-attestation-batch.sql): the statement
 * kysely compiles for a small batch to one trail of one organization must be the file's. A change
 * to the statement changes the file in the same commit, where a reviewer reads it as SQL.
 *
 * To refresh the file after changing the statement:
 *   UPDATE_SQL_SNAPSHOTS=1 npx vitest run --project unit test/unit/trail-store-sql.test.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../services/api/src/storage/database.js';
import type { TrailAttestationBatch } from '../../services/api/src/storage/trail-store/index.js';
import { insertAttestationBatchQuery } from '../../services/api/src/storage/trail-store/write.js';

const SNAPSHOT = new URL(
  '../../services/api/src/storage/trail-store/queries/insert-attestation-batch.sql',
  import.meta.url,
);

/** Compiles for PostgreSQL without a database. */
const compiler = new Kysely<Database>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

const at = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));

/** One attestation to one trail, with an artifact state and a mark: every part of the statement. */
const batch: TrailAttestationBatch = {
  orgId: 'org-1',
  trailId: 'trail-1',
  ifUnchanged: { version: '100', flowVersion: '99', flowNames: ['ci'] },
  trail: { compliance: '{}', compliance_state: 'COMPLIANT', evaluated_at: at, last_modified_at: at },
  facts: { lastId: 'att-1', attestations: [] },
  attestations: [
    {
      row: {
        org_id: 'org-1',
        id: 'att-1',
        flow_id: 'flow-1',
        trail_id: 'trail-1',
        name: 'unit',
        type: 'generic',
        kind: 'attestation',
        is_compliant: true,
        payload: '{}',
        description: '',
        origin_url: '',
        created_by: 'ci',
        created_at: at,
      },
      event: {
        org_id: 'org-1',
        trail_id: 'trail-1',
        type: 'trail_attestation_reported',
        occurred_at: at,
        data: '{}',
      },
    },
  ],
  artifacts: [{ id: 'artifact-1', state: 'COMPLIANT', compliance: '{}', version: '98' }],
  marks: { fingerprints: ['ab'.repeat(32)], at },
};

/** The file's text for a compiled statement. */
const snapshotOf = (sqlText: string) =>
  `-- The statement trailStore.insertAttestationBatch sends for a batch to one organization, as\n` +
  `-- test/unit/trail-store-sql.test.ts compiles it. Do not edit: refresh it with\n` +
  `--   UPDATE_SQL_SNAPSHOTS=1 npx vitest run --project unit test/unit/trail-store-sql.test.ts\n` +
  `${sqlText.trim()}\n`;

describe('the trail store write, as SQL', () => {
  it('is the reviewed statement in queries/insert-attestation-batch.sql', () => {
    const compiled = insertAttestationBatchQuery([batch]).compile(compiler);
    const text = snapshotOf(compiled.sql);
    if (process.env.UPDATE_SQL_SNAPSHOTS === '1') {
      writeFileSync(SNAPSHOT, text);
    }
    expect(text).toBe(readFileSync(SNAPSHOT, 'utf8'));
  });
});
