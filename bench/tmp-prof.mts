import { startApi } from './harness.js';
import { sql } from 'kysely';
const api = await startApi({ postgres: true, poolMax: 20 });
const db = api.db.db;
const build = () =>
  db
    .selectFrom('artifacts as a')
    .innerJoin('trails as t', (j) => j.onRef('t.org_id', '=', 'a.org_id').onRef('t.id', '=', 'a.trail_id'))
    .innerJoin('flows as f', (j) => j.onRef('f.org_id', '=', 'a.org_id').onRef('f.id', '=', 'a.flow_id'))
    .selectAll('a')
    .select(['t.name as trail_name', 'f.name as flow_name'])
    .where('a.org_id', '=', 'x')
    .where('a.flow_id', '=', 'y')
    .where('a.fingerprint', '=', 'z')
    .orderBy('a.created_at', 'desc')
    .limit(1);
let t = performance.now();
for (let i = 0; i < 1000; i++) build().compile();
console.log('compile', ((performance.now() - t) / 1000).toFixed(3));
const pool = (await import('pg')).default;
const client = new pool.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
await client.connect();
t = performance.now();
for (let i = 0; i < 200; i++) await client.query('select 1');
console.log('raw pg select 1', ((performance.now() - t) / 200).toFixed(3));
t = performance.now();
for (let i = 0; i < 200; i++) await client.query({ text: 'select $1::text', values: ['a'] });
console.log('raw pg param', ((performance.now() - t) / 200).toFixed(3));
await client.end();
await api.close();
