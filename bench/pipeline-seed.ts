/**
 * Grows an organization to a given number of attestations with SQL, not the API: one trail that
 * a real CI run made through the API (flow, trail, artifact, attestations, trail events, evidence
 * files) is cloned, 20 attestations a trail (the template's, repeated), one artifact a trail, 1,000
 * trails a flow. Every row goes through the tables' triggers (migrations 0304, 0305: the trail
 * reference check and the change log run once per statement), in statements of a few thousand
 * trails. Evidence files are shared, as identical uploads are. Seeded trails get no `trail_facts`
 * row, as trails written by an older version: a report to one reads its history first. The
 * seeded tables are then analyzed, and PostgreSQL checkpoints. Seeded ids have the
 * API's shape (8-4-4-4-8 hex) in no order, as `newId` made them until 2026-11-24: the API's new
 * rows then land among the seeded ones in every index on an id, as in an organization that grew
 * before ids began with their time, the harder case.
 */
import pg from 'pg';

export const ATTESTATIONS_PER_TRAIL = 20;
const TRAILS_PER_FLOW = 1_000;
const TRAILS_PER_STATEMENT = 2_500;

/** Columns of a table but the generated ones, in order. */
async function columns(c: pg.Client, table: string): Promise<string[]> {
  const r = await c.query<{ column_name: string }>(
    `select column_name from information_schema.columns
      where table_schema = current_schema() and table_name = $1 and is_generated = 'NEVER' and identity_generation is null
      order by ordinal_position`,
    [table],
  );
  return r.rows.map((x) => x.column_name);
}

/** An id shaped as the API's `newId` (8-4-4-4-8 lowercase hex), derived from a unique text. */
function seedId(unique: string): string {
  const h = `md5(${unique})`;
  return [
    [1, 8],
    [9, 4],
    [13, 4],
    [17, 4],
    [21, 8],
  ]
    .map(([from, n]) => `substr(${h}, ${from}, ${n})`)
    .join(` || '-' || `);
}

/** A select list copying `table`'s columns from alias `src`, with some replaced. */
function copyList(cols: string[], replace: Record<string, string>, src: string): string {
  return cols.map((col) => replace[col] ?? `${src}.${col}`).join(', ');
}

/**
 * Seeds `attestations` attestations (rounded to whole trails) into the organization of
 * `templateTrail` (a trail of `flowName`), printing progress. The schema is the connection's.
 */
export async function seedOrganization(
  url: string,
  opts: {
    org: string;
    flowName: string;
    templateTrail: string;
    attestations: number;
    log(line: string): void;
  },
): Promise<{ trails: number; attestations: number; seconds: number }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const started = performance.now();
  try {
    const t = await c.query<{ org_id: string; flow_id: string; trail_id: string; n: number }>(
      `select t.org_id, t.flow_id, t.id as trail_id,
              (select count(*)::int from attestations a where a.org_id = t.org_id and a.trail_id = t.id) as n
         from trails t join flows f on f.org_id = t.org_id and f.id = t.flow_id
         join orgs o on o.id = t.org_id
        where o.name = $1 and f.name = $2 and t.name = $3`,
      [opts.org, opts.flowName, opts.templateTrail],
    );
    const tpl = t.rows[0];
    if (!tpl || tpl.n === 0) {
      throw new Error(`template trail ${opts.templateTrail} not found or empty`);
    }
    const trails = Math.max(1, Math.round(opts.attestations / ATTESTATIONS_PER_TRAIL));
    const flows = Math.ceil(trails / TRAILS_PER_FLOW);
    const cols = {
      flows: await columns(c, 'flows'),
      trails: await columns(c, 'trails'),
      artifacts: await columns(c, 'artifacts'),
      attestations: await columns(c, 'attestations'),
      trail_events: await columns(c, 'trail_events'),
    };
    await c.query(
      `insert into flows (${cols.flows.join(', ')})
       select ${copyList(cols.flows, { id: seedId(`'seed flow ' || g`), name: `'seed-flow-' || g` }, 'f')}
         from flows f, generate_series(1, ${flows}) g where f.org_id = $1 and f.id = $2`,
      [tpl.org_id, tpl.flow_id],
    );
    for (let from = 1; from <= trails; from += TRAILS_PER_STATEMENT) {
      const to = Math.min(trails, from + TRAILS_PER_STATEMENT - 1);
      await seedTrails(c, cols, [tpl.org_id, tpl.trail_id], from, to);
      opts.log(
        `seed: ${(to * ATTESTATIONS_PER_TRAIL).toLocaleString('en-US')} attestations over ${to.toLocaleString('en-US')} trails (${Math.round((performance.now() - started) / 1000)} s)`,
      );
    }
    // An organization that grew over months has its rows on disk long ago. Without the
    // checkpoint, the grown workloads would run inside the one that writes the seed's own
    // gigabytes out, while the empty organization's do not. No VACUUM: it would enter the free
    // tail of every seeded page in the free space map at once, and each new attestation would go
    // to a different old page (a full-page image each after a checkpoint, 11 kB of WAL per
    // request instead of 4.5), which an organization whose tables vacuum as they grow sees only
    // for the pages filled since the last vacuum.
    const at = performance.now();
    await c.query('analyze flows, trails, artifacts, attestations, trail_events');
    try {
      await c.query('checkpoint');
    } catch (err) {
      opts.log(`seed: no checkpoint (${(err as Error).message}); the grown figures include the seed's own`);
    }
    opts.log(`seed: analyzed and checkpointed in ${Math.round((performance.now() - at) / 1000)} s`);
    return {
      trails,
      attestations: trails * ATTESTATIONS_PER_TRAIL,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await c.end();
  }
}

/** Trails `from`..`to` with their artifact, attestations and events, in one transaction. */
async function seedTrails(
  c: pg.Client,
  cols: Record<'trails' | 'artifacts' | 'attestations' | 'trail_events', string[]>,
  p: string[],
  from: number,
  to: number,
): Promise<void> {
  const flowOf = seedId(`'seed flow ' || ((g - 1) / ${TRAILS_PER_FLOW} + 1)`);
  const trailOf = seedId(`'seed trail ' || g`);
  const fpOf = `encode(sha256(('seed artifact ' || g)::bytea), 'hex')`;
  const series = `generate_series(${from}, ${to}) g`;
  // The template's attestations, repeated to 20 a trail, in their order.
  const reps = `generate_series(0, ${ATTESTATIONS_PER_TRAIL} - 1) k`;
  await c.query('begin');
  try {
    await c.query(
      `insert into trails (${cols.trails.join(', ')})
       select ${copyList(cols.trails, { id: trailOf, flow_id: flowOf, name: `'seed-' || g` }, 't')}
         from trails t, ${series} where t.org_id = $1 and t.id = $2`,
      p,
    );
    await c.query(
      `insert into artifacts (${cols.artifacts.join(', ')})
       select ${copyList(
         cols.artifacts,
         { id: seedId(`'seed artifact ' || g`), flow_id: flowOf, trail_id: trailOf, fingerprint: fpOf },
         'a',
       )}
         from artifacts a, ${series} where a.org_id = $1 and a.trail_id = $2`,
      p,
    );
    await c.query(
      `with tpl as (
         select a.*, row_number() over (order by a.seq) - 1 as i, count(*) over () as n
           from attestations a where a.org_id = $1 and a.trail_id = $2)
       insert into attestations (${cols.attestations.join(', ')})
       select ${copyList(
         cols.attestations,
         {
           id: seedId(`'seed attestation ' || g || '-' || k`),
           flow_id: flowOf,
           trail_id: trailOf,
           artifact_fingerprint: `case when a.artifact_fingerprint is null then null else ${fpOf} end`,
         },
         'a',
       )}
         from ${series}, ${reps}, tpl a where a.i = k % a.n
        order by g, k`,
      p,
    );
    await c.query(
      `insert into trail_events (${cols.trail_events.join(', ')})
       select ${copyList(
         cols.trail_events,
         { trail_id: trailOf, fingerprint: `case when e.fingerprint is null then null else ${fpOf} end` },
         'e',
       )}
         from trail_events e, ${series} where e.org_id = $1 and e.trail_id = $2
        order by g, e.seq`,
      p,
    );
    await c.query('commit');
  } catch (err) {
    await c.query('rollback');
    throw err;
  }
}

/** Artifacts the seed wrote (clones of the template CI run's), with their flows, at most `n`. */
export async function seededArtifacts(
  url: string,
  n: number,
): Promise<Array<{ flow: string; fingerprint: string }>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ flow: string; fingerprint: string }>(
      `select f.name as flow, a.fingerprint from artifacts a
         join trails t on t.org_id = a.org_id and t.id = a.trail_id
         join flows f on f.org_id = a.org_id and f.id = a.flow_id
        where t.name ~ '^seed-[0-9]+$' order by a.id limit $1`,
      [n],
    );
    return r.rows;
  } finally {
    await c.end();
  }
}
