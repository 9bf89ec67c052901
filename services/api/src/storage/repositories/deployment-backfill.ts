/**
 * What recording the deployments of snapshots written before deployments were recorded reads
 * (usecases/runtime/delivery-backfill.ts): the environments, their snapshots in pages, the
 * states each snapshot started or changed and those valid just before it, with their verdicts.
 */
import type { Db } from '../database.js';
import type { ProvenanceEntry, StateChange } from '../tables/runtime.js';
import { inPages, runtimeWrites } from './runtime.js';

/** A state as the backfill reads it, with its verdict's compliance and frozen provenance. */
export interface BackfillState {
  fingerprint: string;
  name: string;
  change: StateChange;
  verdict_hash: string;
  from_index: number;
  run_start: number;
  instance_count: number;
  compliant: boolean | null;
  provenance: ProvenanceEntry[];
}

/** A snapshot whose deployments are recorded after its transaction (migration 0432). */
export interface DeferredSnapshot {
  snapshot_index: number;
  compliant_before: boolean | null;
}

/** A snapshot as the backfill reads it. */
export interface BackfillSnapshot {
  index: number;
  created_at: Date;
  compliant: boolean | null;
  started: number;
  changed: number;
  cause: string;
}

const statesWithVerdicts = (db: Db, orgId: string, envId: string) =>
  db
    .selectFrom('runtime_states as s')
    .innerJoin('runtime_verdicts as v', (j) =>
      j.onRef('v.org_id', '=', 's.org_id').onRef('v.hash', '=', 's.verdict_hash'),
    )
    .select([
      's.fingerprint',
      's.name',
      's.change',
      's.verdict_hash',
      's.from_index',
      's.run_start',
      's.instance_count',
      'v.compliant',
      'v.provenance',
    ])
    .where('s.org_id', '=', orgId)
    .where('s.environment_id', '=', envId);

export const deploymentBackfillRepository = {
  /** Whether the backfill has run to its end once. */
  async finished(db: Db): Promise<boolean> {
    return (await db.selectFrom('deployments_backfill').select('id').executeTakeFirst()) !== undefined;
  },

  async finish(db: Db, at: Date): Promise<void> {
    await db
      .insertInto('deployments_backfill')
      .values({ id: 1, finished_at: at })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
  },

  /** The environments of the organizations (all, or the one named), by organization and name. */
  async environments(
    db: Db,
    orgName: string | null,
  ): Promise<Array<{ org_id: string; org_name: string; id: string; name: string }>> {
    return db
      .selectFrom('environments as e')
      .innerJoin('orgs as o', 'o.id', 'e.org_id')
      .select(['e.org_id', 'o.name as org_name', 'e.id', 'e.name'])
      .$if(orgName !== null, (q) => q.where('o.name', '=', orgName!))
      .orderBy('o.name')
      .orderBy('e.name')
      .execute();
  },

  async countSnapshots(db: Db, orgId: string, envId: string): Promise<number> {
    const row = await db
      .selectFrom('runtime_snapshots')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('org_id', '=', orgId)
      .where('environment_id', '=', envId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** The environment's snapshots after `afterIndex`, oldest first, at most `limit`. */
  async snapshotPage(
    db: Db,
    orgId: string,
    envId: string,
    afterIndex: number,
    limit: number,
  ): Promise<BackfillSnapshot[]> {
    return db
      .selectFrom('runtime_snapshots')
      .select(['index', 'created_at', 'compliant', 'started', 'changed', 'cause'])
      .where('org_id', '=', orgId)
      .where('environment_id', '=', envId)
      .where('index', '>', afterIndex)
      .orderBy('index')
      .limit(limit)
      .execute();
  },

  /** The snapshots from `from` to `to` that have deployments recorded. */
  async indexesWithDeployments(
    db: Db,
    orgId: string,
    envId: string,
    from: number,
    to: number,
  ): Promise<Set<number>> {
    const rows = await db
      .selectFrom('deployments')
      .select('snapshot_index')
      .distinct()
      .where('org_id', '=', orgId)
      .where('environment_id', '=', envId)
      .where('snapshot_index', '>=', from)
      .where('snapshot_index', '<=', to)
      .execute();
    return new Set(rows.map((r) => r.snapshot_index));
  },

  /**
   * The states snapshot `index` wrote (started, changed or unchanged), with their verdicts; in
   * pages by fingerprint, as a rollout of a whole cluster writes tens of thousands.
   */
  async statesFrom(db: Db, orgId: string, envId: string, index: number): Promise<BackfillState[]> {
    return inPages<BackfillState>((after) =>
      statesWithVerdicts(db, orgId, envId)
        .where('s.from_index', '=', index)
        .$if(after !== null, (q) => q.where('s.fingerprint', '>', after!.fingerprint))
        .orderBy('s.fingerprint')
        .limit(runtimeWrites.readPageRows)
        .execute(),
    );
  },

  /** The states snapshot `index` changed (they end there without an exit). */
  async statesChangedAt(db: Db, orgId: string, envId: string, index: number): Promise<BackfillState[]> {
    return statesWithVerdicts(db, orgId, envId)
      .where('s.to_index', '=', index)
      .where('s.exited', '=', false)
      .execute();
  },

  /** The states that began from snapshot `from` to `to`. */
  async statesBegun(
    db: Db,
    orgId: string,
    envId: string,
    from: number,
    to: number,
  ): Promise<BackfillState[]> {
    return statesWithVerdicts(db, orgId, envId)
      .where('s.from_index', '>=', from)
      .where('s.from_index', '<=', to)
      .execute();
  },

  /** The states that ended (exited or changed) from snapshot `from` to `to`. */
  async statesEnded(
    db: Db,
    orgId: string,
    envId: string,
    from: number,
    to: number,
  ): Promise<Array<{ fingerprint: string; from_index: number }>> {
    return db
      .selectFrom('runtime_states')
      .select(['fingerprint', 'from_index'])
      .where('org_id', '=', orgId)
      .where('environment_id', '=', envId)
      .where('to_index', '>=', from)
      .where('to_index', '<=', to)
      .execute();
  },

  /** What ran just before snapshot `index`: the states valid at `index - 1`, exits at `index` included. */
  async statesBefore(db: Db, orgId: string, envId: string, index: number): Promise<BackfillState[]> {
    // In pages by (fingerprint, from_index): a fingerprint has one state valid at a time.
    return inPages<BackfillState>((after) =>
      statesWithVerdicts(db, orgId, envId)
        .where('s.from_index', '<', index)
        .where((eb) => eb.or([eb('s.to_index', 'is', null), eb('s.to_index', '>=', index)]))
        .$if(after !== null, (q) =>
          q.where((eb) =>
            eb.or([
              eb('s.fingerprint', '>', after!.fingerprint),
              eb.and([
                eb('s.fingerprint', '=', after!.fingerprint),
                eb('s.from_index', '>', after!.from_index),
              ]),
            ]),
          ),
        )
        .orderBy('s.fingerprint')
        .orderBy('s.from_index')
        .limit(runtimeWrites.readPageRows)
        .execute(),
    );
  },

  /** Notes that a snapshot's deployments are to be recorded after its transaction. */
  async defer(db: Db, row: DeferredSnapshot & { org_id: string; environment_id: string; created_at: Date }) {
    await db.insertInto('deployments_deferred').values(row).execute();
  },

  /** The environment's snapshots whose deployments are still to be recorded, oldest first. */
  async deferred(db: Db, orgId: string, envId: string): Promise<DeferredSnapshot[]> {
    return db
      .selectFrom('deployments_deferred')
      .select(['snapshot_index', 'compliant_before'])
      .where('org_id', '=', orgId)
      .where('environment_id', '=', envId)
      .orderBy('snapshot_index')
      .execute();
  },

  async recorded(db: Db, orgId: string, envId: string, index: number): Promise<void> {
    await db
      .deleteFrom('deployments_deferred')
      .where('org_id', '=', orgId)
      .where('environment_id', '=', envId)
      .where('snapshot_index', '=', index)
      .execute();
  },

  /** When the oldest snapshot still waiting for its deployments was written; null when none waits. */
  async oldestDeferred(db: Db): Promise<Date | null> {
    const row = await db
      .selectFrom('deployments_deferred')
      .select((eb) => eb.fn.min('created_at').as('oldest'))
      .executeTakeFirst();
    return row?.oldest ? new Date(row.oldest) : null;
  },

  /** Environments with snapshots whose deployments are still to be recorded, at most `limit`. */
  async deferredEnvironments(
    db: Db,
    limit: number,
  ): Promise<Array<{ org_id: string; org_name: string; id: string; name: string }>> {
    return db
      .selectFrom('deployments_deferred as d')
      .innerJoin('environments as e', (j) =>
        j.onRef('e.org_id', '=', 'd.org_id').onRef('e.id', '=', 'd.environment_id'),
      )
      .innerJoin('orgs as o', 'o.id', 'd.org_id')
      .select(['d.org_id', 'o.name as org_name', 'e.id', 'e.name'])
      .distinct()
      .orderBy('d.org_id')
      .orderBy('e.id')
      .limit(limit)
      .execute();
  },
};
