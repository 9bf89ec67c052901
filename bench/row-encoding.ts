/**
 * Is it the API's encoding or the database's rows? 50,000 deployment rows (one per image of a
 * rolling 50,000-pod report, as the rollout writes them) into a throwaway copy of `deployments`,
 * sent as 22 arrays (`unnest`, as the repository sends them) and as one JSON document
 * (`jsonb_populate_recordset`), with the primary key and three of the table's indexes, then with
 * the primary key alone. Each insert runs in a transaction that is rolled back.
 *
 *   npx tsx bench/row-encoding.ts   (PostgreSQL at BENCH_DATABASE_URL, default the CI database)
 */
import pg from 'pg';

const URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/verity_ci';
const ROWS = 50_000;
const BATCH = 2_500;
const COLUMNS = [
  ['org_id', 'text'],
  ['id', 'text'],
  ['environment_id', 'text'],
  ['snapshot_index', 'int'],
  ['started_at', 'timestamptz'],
  ['fingerprint', 'text'],
  ['artifact_name', 'text'],
  ['artifact_id', 'text'],
  ['flow_name', 'text'],
  ['trail_name', 'text'],
  ['git_commit', 'text'],
  ['html_url', 'text'],
  ['repo_name', 'text'],
  ['replaced', 'jsonb'],
  ['rollback', 'boolean'],
  ['commit_lead_time', 'float8'],
  ['build_lead_time', 'float8'],
  ['change_lead_time', 'float8'],
  ['commits', 'jsonb'],
  ['compliant', 'boolean'],
  ['rolled_back_at', 'timestamptz'],
  ['broke_compliance_at', 'timestamptz'],
] as const;
const INDEXES = [
  'create index on bench_deployment_rows (org_id, started_at desc, id desc) include (environment_id, repo_name, change_lead_time, rolled_back_at, broke_compliance_at)',
  'create index on bench_deployment_rows (org_id, environment_id, started_at desc, id desc)',
  'create index on bench_deployment_rows (org_id, environment_id, fingerprint, started_at desc)',
];

type Row = Record<(typeof COLUMNS)[number][0], unknown>;

const now = new Date().toISOString();
const rows: Row[] = Array.from({ length: ROWS }, (_, i) => ({
  org_id: 'org',
  id: `dep-${String(i).padStart(8, '0')}`,
  environment_id: 'env',
  snapshot_index: 2,
  started_at: now,
  fingerprint: (i * 7919).toString(16).padStart(64, 'a'),
  artifact_name: `r.example/svc-${i}:v2`,
  artifact_id: null,
  flow_name: null,
  trail_name: null,
  git_commit: null,
  html_url: null,
  repo_name: null,
  replaced: [
    { name: `r.example/svc-${i}:v1`, fingerprint: (i * 31).toString(16).padStart(64, 'b'), git_commit: null },
  ],
  rollback: false,
  commit_lead_time: null,
  build_lead_time: null,
  change_lead_time: null,
  commits: [],
  compliant: null,
  rolled_back_at: null,
  broke_compliance_at: null,
}));

async function timed(client: pg.Client, insert: (part: Row[]) => Promise<unknown>): Promise<number> {
  await client.query('begin');
  const start = performance.now();
  for (let i = 0; i < ROWS; i += BATCH) {
    await insert(rows.slice(i, i + BATCH));
  }
  const ms = performance.now() - start;
  await client.query('rollback');
  return ms;
}

const names = COLUMNS.map(([c]) => c).join(', ');
// jsonb columns go as text arrays and are cast per row, as the repository sends them.
const selected = COLUMNS.map(([c, type]) => (type === 'jsonb' ? `r.${c}::jsonb` : `r.${c}`)).join(', ');
const arrays = COLUMNS.map(([, type], k) => `$${k + 1}::${type === 'jsonb' ? 'text' : type}[]`).join(', ');
const asArrays = (client: pg.Client) => (part: Row[]) =>
  client.query(
    `insert into bench_deployment_rows select ${selected} from unnest(${arrays}) as r(${names})`,
    COLUMNS.map(([c, type]) => part.map((r) => (type === 'jsonb' ? JSON.stringify(r[c]) : r[c]))),
  );
const asJson = (client: pg.Client) => (part: Row[]) =>
  client.query(
    'insert into bench_deployment_rows select * from jsonb_populate_recordset(null::bench_deployment_rows, $1::jsonb)',
    [JSON.stringify(part)],
  );

async function main(): Promise<void> {
  const client = new pg.Client(URL);
  await client.connect();
  try {
    const table = COLUMNS.map(([c, type]) => `${c} ${type}`).join(', ');
    for (const withIndexes of [true, false]) {
      await client.query('drop table if exists bench_deployment_rows');
      await client.query(`create table bench_deployment_rows (${table}, primary key (org_id, id))`);
      for (const ddl of withIndexes ? INDEXES : []) {
        await client.query(ddl);
      }
      const label = withIndexes ? 'primary key and three indexes' : 'primary key alone';
      for (let round = 1; round <= 3; round += 1) {
        const viaArrays = await timed(client, asArrays(client));
        const viaJson = await timed(client, asJson(client));
        console.log(
          `${label}, round ${round}: arrays ${viaArrays.toFixed(0)} ms, one JSON document ${viaJson.toFixed(0)} ms`,
        );
      }
    }
  } finally {
    await client.query('drop table if exists bench_deployment_rows');
    await client.end();
  }
}

await main();
