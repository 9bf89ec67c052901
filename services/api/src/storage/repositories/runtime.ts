/**
 * What runs in environments now (`runtime_live`), its history as states valid over snapshot
 * ranges (`runtime_states`), the snapshots as they are written, and the content-addressed
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
import { groupBy } from '../../group-by.js';

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

export const runtimeRepository = {
  /** The live state without instance details: enough to diff a report. */
  async live(
    db: Db,
    orgId: string,
    envId: string,
  ): Promise<Array<{ fingerprint: string; name: string; instance_count: number; detail_hash: string }>> {
    return db
      .selectFrom('runtime_live')
      .select(['fingerprint', 'name', 'instance_count', 'detail_hash'])
      .where('org_id', '=', orgId)
      .where('environment_id', '=', envId)
      .execute();
  },

  async liveDetails(
    db: Db,
    orgId: string,
    envId: string,
  ): Promise<Map<string, { detail: InstanceDetail[]; instance_count: number; detail_hash: string }>> {
    const rows = await db
      .selectFrom('runtime_live')
      .select(['fingerprint', 'detail', 'instance_count', 'detail_hash'])
      .where('org_id', '=', orgId)
      .where('environment_id', '=', envId)
      .execute();
    return new Map(rows.map((r) => [r.fingerprint, r]));
  },

  async upsertLive(
    db: Db,
    orgId: string,
    envId: string,
    rows: ReadonlyArray<{
      fingerprint: string;
      name: string;
      instance_count: number;
      detail_hash: string;
      detail: string;
    }>,
  ): Promise<void> {
    for (const part of chunks(rows)) {
      await db
        .insertInto('runtime_live')
        .values(part.map((r) => ({ ...r, org_id: orgId, environment_id: envId })))
        .onConflict((oc) =>
          oc.columns(['org_id', 'environment_id', 'fingerprint']).doUpdateSet((eb) => ({
            name: eb.ref('excluded.name'),
            instance_count: eb.ref('excluded.instance_count'),
            detail_hash: eb.ref('excluded.detail_hash'),
            detail: eb.ref('excluded.detail'),
          })),
        )
        .execute();
    }
  },

  async deleteLive(db: Db, orgId: string, envId: string, fingerprints: readonly string[]): Promise<void> {
    for (const part of chunks(fingerprints)) {
      await db
        .deleteFrom('runtime_live')
        .where('org_id', '=', orgId)
        .where('environment_id', '=', envId)
        .where('fingerprint', 'in', part)
        .execute();
    }
  },

  /** Environments where any of the fingerprints runs now. */
  async environmentsRunning(db: Db, orgId: string, fingerprints: readonly string[]): Promise<string[]> {
    if (fingerprints.length === 0) {
      return [];
    }
    const rows = await db
      .selectFrom('runtime_live')
      .select('environment_id')
      .distinct()
      .where('org_id', '=', orgId)
      .where('fingerprint', 'in', [...fingerprints])
      .execute();
    return rows.map((r) => r.environment_id);
  },

  async insertDetails(
    db: Db,
    orgId: string,
    rows: ReadonlyArray<{ hash: string; detail: string }>,
  ): Promise<void> {
    const unique = [...new Map(rows.map((r) => [r.hash, r])).values()];
    for (const part of chunks(unique)) {
      await db
        .insertInto('runtime_details')
        .values(part.map((r) => ({ org_id: orgId, hash: r.hash, detail: r.detail })))
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
  },

  async insertVerdicts(db: Db, orgId: string, rows: readonly NewVerdict[]): Promise<void> {
    const unique = [...new Map(rows.map((r) => [r.hash, r])).values()];
    for (const part of chunks(unique)) {
      await db
        .insertInto('runtime_verdicts')
        .values(
          part.map((v) => ({
            org_id: orgId,
            hash: v.hash,
            compliant: v.compliant,
            provenance: JSON.stringify(v.provenance),
            decisions: JSON.stringify(v.decisions),
            reasons: JSON.stringify(v.reasons),
            allowlisted: v.allowlisted,
          })),
        )
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
  },

  /** Current states (still valid), with their verdicts' compliance. */
  async currentStates(
    db: Db,
    orgId: string,
    envId: string,
  ): Promise<Array<StateRow & Pick<VerdictBody, 'compliant' | 'provenance'>>> {
    return db
      .selectFrom('runtime_states as s')
      .innerJoin('runtime_verdicts as v', (j) =>
        j.onRef('v.org_id', '=', 's.org_id').onRef('v.hash', '=', 's.verdict_hash'),
      )
      .selectAll('s')
      .select(['v.compliant', 'v.provenance'])
      .where('s.org_id', '=', orgId)
      .where('s.environment_id', '=', envId)
      .where('s.to_index', 'is', null)
      .execute();
  },

  /** Ends the current states of fingerprints that stopped running at `toIndex`. */
  async closeExits(
    db: Db,
    orgId: string,
    envId: string,
    exits: ReadonlyArray<{ fingerprint: string; count: number }>,
    toIndex: number,
  ): Promise<void> {
    const byCount = groupBy(
      exits,
      (e) => e.count,
      (e) => e.fingerprint,
    );
    // One statement per distinct count and 500 fingerprints: bounded by the exits of one report.
    for (const [count, fingerprints] of byCount) {
      for (const part of chunks(fingerprints)) {
        await db
          .updateTable('runtime_states')
          .set({ to_index: toIndex, exited: true, exit_count: count })
          .where('org_id', '=', orgId)
          .where('environment_id', '=', envId)
          .where('to_index', 'is', null)
          .where('fingerprint', 'in', part)
          .execute();
      }
    }
  },

  async closeStates(
    db: Db,
    orgId: string,
    envId: string,
    fingerprints: readonly string[],
    toIndex: number,
  ): Promise<void> {
    for (const part of chunks(fingerprints)) {
      await db
        .updateTable('runtime_states')
        .set({ to_index: toIndex })
        .where('org_id', '=', orgId)
        .where('environment_id', '=', envId)
        .where('to_index', 'is', null)
        .where('fingerprint', 'in', part)
        .execute();
    }
  },

  async insertStates(db: Db, orgId: string, envId: string, rows: readonly NewState[]): Promise<void> {
    for (const part of chunks(rows)) {
      await db
        .insertInto('runtime_states')
        .values(
          part.map((r): Insertable<RuntimeStatesTable> => ({ ...r, org_id: orgId, environment_id: envId })),
        )
        .execute();
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
      'runtime_live',
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
