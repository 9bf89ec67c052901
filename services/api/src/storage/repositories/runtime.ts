/**
 * What runs in environments and its history, as states valid over snapshot ranges
 * (`runtime_states`, the current ones also what runs now), the snapshots as they are written, and the content-addressed
 * instance details and verdicts they share. See tables/runtime.ts for the storage model; reads of
 * past snapshots are in snapshots.ts.
 */
import { sql, type Insertable, type Selectable } from 'kysely';
import type { NewState } from '../../domain/snapshot-plan.js';
import type { Db } from '../database.js';
import type {
  AppliedPolicyRef,
  InstanceDetail,
  PolicyDecision,
  ProvenanceEntry,
  RuntimeSnapshotsTable,
  RuntimeStatesTable,
} from '../tables/runtime.js';

export type { NewState };
export type StateRow = Selectable<RuntimeStatesTable>;

/** The frozen part of a verdict: what a snapshot shows of a fingerprint's provenance and policies. */
export interface VerdictBody {
  compliant: boolean | null;
  provenance: ProvenanceEntry[];
  decisions: PolicyDecision[];
  reasons: string[];
  allowlisted: boolean;
}

/** A state with its verdict, as snapshot reads present it. */
export interface StateWithVerdict extends StateRow, VerdictBody {}

/** A verdict to store under its content hash. */
export interface NewVerdict extends VerdictBody {
  hash: string;
}

const CHUNK = 500;
/** Splits rows so one statement stays under the driver's parameter limit. */
export function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) {
    out.push(items.slice(i, i + CHUNK));
  }
  return out;
}

/**
 * Parameter text one set-based statement carries at most. The writes of a report pass their rows
 * as arrays (`unnest`), one statement per table whatever the row count, and split so that no
 * statement's parameters grow past this: a report at the cap (MAX_REPORT_ARTIFACTS) is a few
 * statements per table. The driver serializes a statement's parameters in one piece on the API's
 * thread; at 8 MiB that was 150 to 250 ms on a slow core, every other request waiting.
 */
export const STATEMENT_BYTES = 1024 * 1024;

/**
 * The same bound on the embedded database, which runs each statement on the API's own thread:
 * there one statement holds every other request for its whole run, so rows go in far smaller
 * statements (set by create-db.ts when it opens PGlite; one database per process).
 */
export const EMBEDDED_STATEMENT_BYTES = 256 * 1024;

/**
 * Rows one update of current states changes at most on the embedded database. An update costs
 * far more per row than its parameters say (a new row version and an entry in each of the
 * table's indexes): 3,000 fingerprints, 256 KiB of parameters, took about 300 ms of the API's
 * thread on a slow core.
 */
export const EMBEDDED_UPDATE_ROWS = 1_000;

/**
 * Rows one page of an environment's live rows or current states holds on the embedded database:
 * a page of 5,000 current states took 185 to 350 ms of the API's thread on a slow core.
 */
export const EMBEDDED_READ_PAGE_ROWS = 2_000;

/** What `batches` splits at, and the page of `inPages`, in this process (create-db.ts sets the embedded database's). */
export const runtimeWrites = {
  statementBytes: STATEMENT_BYTES,
  updateRows: Number.POSITIVE_INFINITY,
  readPageRows: 5_000,
};

/**
 * JSON documents (each already JSON text, as the report's canonical detail is) as one JSON array
 * parameter, for `jsonb_array_elements`: joined as they are, where a text array would have every
 * quote in them escaped by the driver, and parsed by the server once.
 */
const jsonArray = (docs: readonly string[]): string => `[${docs.join(',')}]`;

/**
 * Splits rows into runs whose estimated parameter text (`bytes` of each) stays under the bound,
 * of at most `maxRows` rows each.
 */
export function batches<T>(
  items: readonly T[],
  bytes: (item: T) => number,
  maxRows = Number.POSITIVE_INFINITY,
): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let size = 0;
  for (const item of items) {
    const b = bytes(item);
    if (current.length > 0 && (size + b > runtimeWrites.statementBytes || current.length >= maxRows)) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(item);
    size += b;
  }
  if (current.length > 0) {
    out.push(current);
  }
  return out;
}

/**
 * Every row `page` gives, asking for the page after the last row until one is short. A large
 * environment (up to MAX_REPORT_ARTIFACTS) is read in pages of `runtimeWrites.readPageRows` by
 * fingerprint, so that no one statement reads all of it: on the embedded database a statement
 * runs on the API's thread, and reading 50,000 states in one held every other request for over a
 * second.
 */
export async function inPages<T>(page: (after: T | null) => Promise<T[]>): Promise<T[]> {
  const out: T[] = [];
  let after: T | null = null;
  const pageRows = runtimeWrites.readPageRows;
  // Bounded by the environment's rows: each page moves past `pageRows` of them.
  for (;;) {
    const rows = await page(after);
    for (const row of rows) {
      out.push(row);
    }
    if (rows.length < pageRows) {
      return out;
    }
    after = rows[rows.length - 1]!;
  }
}

/** The columns of a state (`s`), without what was reported since it was written. */
export const STATE_COLUMNS = [
  's.org_id',
  's.environment_id',
  's.fingerprint',
  's.from_index',
  's.to_index',
  's.exited',
  's.exit_count',
  's.name',
  's.instance_count',
  's.was_count',
  's.change',
  's.detail_hash',
  's.verdict_hash',
  's.run_start',
] as const;

type PageKey = { fingerprint: string; from_index: number };

/**
 * One page of an environment's current states after `after`, in fingerprint order (the index
 * `runtime_states_current_fp_idx`), as `s`; the caller selects. Fingerprint and from_index: a key
 * even if a fingerprint had two open states.
 */
function currentPage(db: Db, orgId: string, envId: string, after: PageKey | null) {
  return db
    .selectFrom('runtime_states as s')
    .where('s.org_id', '=', orgId)
    .where('s.environment_id', '=', envId)
    .where('s.to_index', 'is', null)
    .$if(after !== null, (q) =>
      q.where(sql<boolean>`(s.fingerprint, s.from_index) > (${after!.fingerprint}, ${after!.from_index})`),
    )
    .orderBy('s.fingerprint')
    .orderBy('s.from_index')
    .limit(runtimeWrites.readPageRows);
}

/** A closed state keeps what it recorded, not what was reported while it was current. */
const clearLive = sql`live_count = null, live_detail_hash = null, live_detail = null`;

/** What runs now of a current state: its count and details as last reported. */
const liveCount = sql<number>`coalesce(s.live_count, s.instance_count)`.as('instance_count');
const liveDetailHash = sql<string>`coalesce(s.live_detail_hash, s.detail_hash)`.as('detail_hash');

/** A fingerprint as last reported, where it moved since its current state was written. */
export interface LiveChange {
  fingerprint: string;
  instance_count: number;
  detail_hash: string;
  /** The instances' canonical JSON text. */
  detail: string;
}

export const runtimeRepository = {
  /** What runs now, without instance details: enough to diff a report. */
  async live(
    db: Db,
    orgId: string,
    envId: string,
  ): Promise<Array<{ fingerprint: string; name: string; instance_count: number; detail_hash: string }>> {
    // Each row keeps its page key (from_index): no copy of up to a report's worth of rows to drop it.
    return inPages<PageKey & { name: string; instance_count: number; detail_hash: string }>((after) =>
      currentPage(db, orgId, envId, after)
        .select(['s.fingerprint', 's.from_index', 's.name', liveCount, liveDetailHash])
        .execute(),
    );
  },

  /** What runs now, with the instance details as last reported, by fingerprint. */
  async liveDetails(
    db: Db,
    orgId: string,
    envId: string,
  ): Promise<Map<string, { detail: InstanceDetail[]; instance_count: number; detail_hash: string }>> {
    type Row = PageKey & { detail: InstanceDetail[]; instance_count: number; detail_hash: string };
    const rows = await inPages<Row>((after) =>
      currentPage(db, orgId, envId, after)
        .leftJoin('runtime_details as d', (j) =>
          j.onRef('d.org_id', '=', 's.org_id').onRef('d.hash', '=', 's.detail_hash'),
        )
        .select([
          's.fingerprint',
          's.from_index',
          liveCount,
          liveDetailHash,
          sql<InstanceDetail[]>`case when s.live_detail_hash is null then d.detail else s.live_detail end`.as(
            'detail',
          ),
        ])
        .execute(),
    );
    return new Map(rows.map((r) => [r.fingerprint, r]));
  },

  /**
   * Records on the current states of these fingerprints their count and instance details as
   * reported now (rules 3 and 4: they make no snapshot), in one statement per STATEMENT_BYTES of
   * rows. A value equal to the state's own is stored as null. The fingerprints go as `= any`, so
   * that each state is found by key (see closeStates).
   */
  async updateLive(db: Db, orgId: string, envId: string, rows: readonly LiveChange[]): Promise<void> {
    for (const part of batches(
      rows,
      (r) => 2 * r.fingerprint.length + r.detail_hash.length + r.detail.length + 40,
    )) {
      const fingerprints = part.map((r) => r.fingerprint);
      await sql`update runtime_states s
        set live_count = nullif(r.instance_count, s.instance_count),
          live_detail_hash = nullif(r.detail_hash, s.detail_hash),
          live_detail = case when r.detail_hash = s.detail_hash then null else r.detail end
        from rows from (unnest(${fingerprints}::text[]), unnest(${part.map((r) => r.instance_count)}::int[]),
          unnest(${part.map((r) => r.detail_hash)}::text[]),
          jsonb_array_elements(${jsonArray(part.map((r) => r.detail))}::jsonb))
          as r(fingerprint, instance_count, detail_hash, detail)
        where s.org_id = ${orgId} and s.environment_id = ${envId} and s.fingerprint = any(${fingerprints}::text[])
          and s.to_index is null and s.fingerprint = r.fingerprint`.execute(db);
    }
  },

  /** Environments where any of the fingerprints runs now. */
  async environmentsRunning(db: Db, orgId: string, fingerprints: readonly string[]): Promise<string[]> {
    if (fingerprints.length === 0) {
      return [];
    }
    const rows = await db
      .selectFrom('runtime_states')
      .select('environment_id')
      .distinct()
      .where('org_id', '=', orgId)
      .where('fingerprint', 'in', [...fingerprints])
      .where('to_index', 'is', null)
      .execute();
    return rows.map((r) => r.environment_id);
  },

  async insertDetails(
    db: Db,
    orgId: string,
    rows: ReadonlyArray<{ hash: string; detail: string }>,
  ): Promise<void> {
    const unique = [...new Map(rows.map((r) => [r.hash, r])).values()];
    for (const part of batches(unique, (r) => r.hash.length + r.detail.length + 8)) {
      await sql`insert into runtime_details (org_id, hash, detail)
        select ${orgId}, r.hash, r.detail
        from rows from (unnest(${part.map((r) => r.hash)}::text[]),
          jsonb_array_elements(${jsonArray(part.map((r) => r.detail))}::jsonb)) as r(hash, detail)
        on conflict do nothing`.execute(db);
    }
  },

  async insertVerdicts(db: Db, orgId: string, rows: readonly NewVerdict[]): Promise<void> {
    const unique = [...new Map(rows.map((r) => [r.hash, r])).values()].map((v) => ({
      hash: v.hash,
      compliant: v.compliant,
      provenance: JSON.stringify(v.provenance),
      decisions: JSON.stringify(v.decisions),
      reasons: JSON.stringify(v.reasons),
      allowlisted: v.allowlisted,
    }));
    const size = (v: (typeof unique)[number]) =>
      v.hash.length + v.provenance.length + v.decisions.length + v.reasons.length + 24;
    for (const part of batches(unique, size)) {
      await sql`insert into runtime_verdicts (org_id, hash, compliant, provenance, decisions, reasons, allowlisted)
        select ${orgId}, v.hash, v.compliant, v.provenance::jsonb, v.decisions::jsonb, v.reasons::jsonb, v.allowlisted
        from unnest(${part.map((v) => v.hash)}::text[], ${part.map((v) => v.compliant)}::boolean[],
          ${part.map((v) => v.provenance)}::text[], ${part.map((v) => v.decisions)}::text[],
          ${part.map((v) => v.reasons)}::text[], ${part.map((v) => v.allowlisted)}::boolean[])
          as v(hash, compliant, provenance, decisions, reasons, allowlisted)
        on conflict do nothing`.execute(db);
    }
  },

  /** Current states (still valid), with their verdicts' compliance: one per fingerprint. */
  async currentStates(
    db: Db,
    orgId: string,
    envId: string,
  ): Promise<Array<StateRow & Pick<VerdictBody, 'compliant' | 'provenance'>>> {
    return inPages((after) =>
      currentPage(db, orgId, envId, after)
        .innerJoin('runtime_verdicts as v', (j) =>
          j.onRef('v.org_id', '=', 's.org_id').onRef('v.hash', '=', 's.verdict_hash'),
        )
        .select(STATE_COLUMNS)
        .select(['v.compliant', 'v.provenance'])
        .execute(),
    );
  },

  /**
   * Ends the current states of fingerprints that stopped running at `toIndex`, each with its
   * last count.
   */
  async closeExits(
    db: Db,
    orgId: string,
    envId: string,
    exits: ReadonlyArray<{ fingerprint: string; count: number }>,
    toIndex: number,
  ): Promise<void> {
    // One statement per exit count, so that each finds its states by key (see closeStates). The
    // counts are instances of the environment's last snapshot, which add up to at most its pods
    // (MAX_REPORT_ARTIFACTS): distinct counts summing to 50,000 are at most 315 values.
    const byCount = new Map<number, string[]>();
    for (const e of exits) {
      const group = byCount.get(e.count);
      if (group) {
        group.push(e.fingerprint);
      } else {
        byCount.set(e.count, [e.fingerprint]);
      }
    }
    for (const [count, fingerprints] of byCount) {
      for (const part of batches(fingerprints, (f) => f.length + 4, runtimeWrites.updateRows)) {
        await sql`update runtime_states set to_index = ${toIndex}, exited = true, exit_count = ${count}, ${clearLive}
          where org_id = ${orgId} and environment_id = ${envId} and fingerprint = any(${part}::text[])
            and to_index is null`.execute(db);
      }
    }
  },

  /**
   * Ends the current states of fingerprints that a new state replaces at `toIndex`. The
   * fingerprints go as `= any(...)`, which the planner answers from the index, one lookup each; a
   * join with `unnest` was planned as a hash of all the environment's current states, so a report
   * written in many statements read the environment once per statement.
   */
  async closeStates(
    db: Db,
    orgId: string,
    envId: string,
    fingerprints: readonly string[],
    toIndex: number,
  ): Promise<void> {
    for (const part of batches(fingerprints, (f) => f.length + 4, runtimeWrites.updateRows)) {
      await sql`update runtime_states set to_index = ${toIndex}, ${clearLive}
        where org_id = ${orgId} and environment_id = ${envId} and fingerprint = any(${part}::text[])
          and to_index is null`.execute(db);
    }
  },

  async insertStates(db: Db, orgId: string, envId: string, rows: readonly NewState[]): Promise<void> {
    const size = (r: NewState) =>
      r.fingerprint.length + r.name.length + r.detail_hash.length + r.verdict_hash.length + 64;
    for (const part of batches(rows, size)) {
      const column = <K extends keyof NewState>(key: K) => part.map((r) => r[key]);
      await sql`insert into runtime_states (org_id, environment_id, fingerprint, from_index, name, instance_count,
          was_count, change, detail_hash, verdict_hash, run_start)
        select ${orgId}, ${envId}, r.*
        from unnest(${column('fingerprint')}::text[], ${column('from_index')}::int[], ${column('name')}::text[],
          ${column('instance_count')}::int[], ${column('was_count')}::int[], ${column('change')}::text[],
          ${column('detail_hash')}::text[], ${column('verdict_hash')}::text[], ${column('run_start')}::int[])
          as r(fingerprint, from_index, name, instance_count, was_count, change, detail_hash, verdict_hash, run_start)`.execute(
        db,
      );
    }
  },

  async insertSnapshot(
    db: Db,
    row: Omit<Insertable<RuntimeSnapshotsTable>, 'applied_policies'> & {
      applied_policies: AppliedPolicyRef[];
    },
  ): Promise<void> {
    await db
      .insertInto('runtime_snapshots')
      .values({ ...row, applied_policies: JSON.stringify(row.applied_policies) })
      .execute();
  },

  /** Bytes the runtime tables hold (for the benchmark's growth figure). */
  async storageBytes(db: Db): Promise<number> {
    const tables = [
      'runtime_states',
      'runtime_snapshots',
      'runtime_details',
      'runtime_verdicts',
      'environments',
      'outbox',
    ];
    const row = await sql<{ bytes: number }>`select sum(pg_total_relation_size(c.oid))::bigint as bytes
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relname in (${sql.join(tables)})`.execute(db);
    return Number(row.rows[0]?.bytes ?? 0);
  },
};
