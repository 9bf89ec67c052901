/**
 * Reads the evidence change log of migration 0302 (`evidence_changes`: one row per writing
 * transaction and org) so every replica's caches follow every committed write, whoever made it.
 *
 * Rows are read by transaction id: each poll takes the oldest transaction still running
 * (its snapshot's xmin) as the next poll's lower bound, so a transaction that commits after a
 * younger one is still read, and rows already handled are remembered until the bound passes
 * them. Rows are deleted once the bound passed them a retention period ago: every healthy
 * replica has read them by then. A replica that cannot poll is unhealthy (caches must not be
 * used) and starts its caches over when it can again.
 */
import { sql } from 'kysely';
import type { Db } from './database.js';

export interface ChangeFeedOptions {
  /** Between polls. */
  intervalMs?: number;
  /** Without a successful poll for this long the feed is unhealthy. */
  staleAfterMs?: number;
  /** Rows are deleted this long after every transaction that could have written them ended. */
  retentionMs?: number;
  onChange(orgId: string): void;
  /** Changes may have been missed: forget everything cached. */
  onReset(): void;
  onError?(err: Error): void;
  now?: () => number;
}

export interface ChangeFeed {
  /** True while polls succeed; caches must not be trusted otherwise. */
  readonly healthy: boolean;
  /** Polls once now (tests; normally polls run on their own). */
  poll(): Promise<void>;
  close(): Promise<void>;
}

type Row = { horizon: string; rows: Array<[string, string]> };

export function startChangeFeed(db: Db, options: ChangeFeedOptions): ChangeFeed {
  const intervalMs = options.intervalMs ?? 100;
  const staleAfterMs = options.staleAfterMs ?? Math.max(2_000, intervalMs * 20);
  const retentionMs = options.retentionMs ?? 60_000;
  const now = options.now ?? Date.now;
  let horizon: bigint | undefined;
  /** `xid:org` of rows handled at or above the horizon (they are read again until it passes them). */
  let seen = new Set<string>();
  /** Horizons by when they were observed, for deleting what every replica has read. */
  const horizons: Array<{ at: number; horizon: bigint }> = [];
  let lastOk = -Infinity;
  let lastCleanup = now();
  let wasHealthy = false;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  /** Polls failed in a row: while the database is away, poll less often (with jitter). */
  let failures = 0;

  const healthy = () => !closed && now() - lastOk <= staleAfterMs;

  const pollOnce = async () => {
    const from = horizon === undefined ? null : horizon.toString();
    // The first poll starts at the oldest running transaction: what it finds, the reset covers.
    const result = await sql<Row>`
      select pg_snapshot_xmin(pg_current_snapshot())::text as horizon,
        coalesce((select json_agg(json_build_array(xid::text, org_id)) from evidence_changes
          where xid >= coalesce(${from}::xid8, pg_snapshot_xmin(pg_current_snapshot()))), '[]'::json) as rows`.execute(
      db,
    );
    const row = result.rows[0]!;
    const next = BigInt(row.horizon);
    const reset = !wasHealthy;
    if (reset) {
      // First poll, or the first after polls failed for too long: whatever was cached may be stale.
      options.onReset();
      wasHealthy = true;
    }
    const nextSeen = new Set<string>();
    for (const [xid, org] of row.rows) {
      const key = `${xid}:${org}`;
      if (BigInt(xid) >= next) nextSeen.add(key);
      if (!reset && !seen.has(key)) options.onChange(org);
    }
    seen = nextSeen;
    horizon = next;
    lastOk = now();
    horizons.push({ at: lastOk, horizon: next });
    if (lastOk - lastCleanup >= Math.min(10_000, retentionMs)) {
      lastCleanup = lastOk;
      let cut: bigint | undefined;
      while (horizons.length > 0 && lastOk - horizons[0]!.at >= retentionMs) cut = horizons.shift()!.horizon;
      if (cut !== undefined)
        await sql`delete from evidence_changes where xid < ${cut.toString()}::xid8`.execute(db);
    }
  };

  const tick = async () => {
    timer = undefined;
    if (closed) return;
    running = pollOnce()
      .then(() => {
        failures = 0;
      })
      .catch((err: Error) => {
        failures += 1;
        options.onError?.(err);
      })
      .finally(() => {
        running = undefined;
        if (!healthy()) wasHealthy = false;
        if (!closed) {
          const backoff =
            Math.min(2_000, intervalMs * 2 ** Math.min(failures, 10)) * (0.5 + Math.random() / 2);
          timer = setTimeout(() => void tick(), failures > 0 ? Math.max(intervalMs, backoff) : intervalMs);
          timer.unref();
        }
      });
    await running;
  };
  void tick();

  return {
    get healthy() {
      return healthy();
    },
    async poll() {
      await running;
      if (timer) clearTimeout(timer);
      await tick();
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
