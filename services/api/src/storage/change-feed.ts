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

/**
 * The horizon (the oldest running transaction) and the changes at or above `from`; the first poll
 * starts at the horizon itself: what it finds, the reset covers.
 */
async function readChanges(db: Db, from: bigint | undefined): Promise<Row> {
  const start = from === undefined ? null : from.toString();
  const result = await sql<Row>`
      select pg_snapshot_xmin(pg_current_snapshot())::text as horizon,
        coalesce((select json_agg(json_build_array(xid::text, org_id)) from evidence_changes
          where xid >= coalesce(${start}::xid8, pg_snapshot_xmin(pg_current_snapshot()))), '[]'::json) as rows`.execute(
    db,
  );
  return result.rows[0]!;
}

/** Deletes the changes below the newest horizon observed before `before` (every replica read them). */
async function deleteRead(
  db: Db,
  horizons: Array<{ at: number; horizon: bigint }>,
  before: number,
): Promise<void> {
  let cut: bigint | undefined;
  while (horizons.length > 0 && horizons[0]!.at <= before) {
    cut = horizons.shift()!.horizon;
  }
  if (cut !== undefined) {
    await sql`delete from evidence_changes where xid < ${cut.toString()}::xid8`.execute(db);
  }
}

/** The wait before the next poll: the interval, or a jittered backoff while polls fail. */
function pollDelay(intervalMs: number, failures: number): number {
  if (failures === 0) {
    return intervalMs;
  }
  const backoff = Math.min(2_000, intervalMs * 2 ** Math.min(failures, 10)) * (0.5 + Math.random() / 2);
  return Math.max(intervalMs, backoff);
}

/**
 * The organizations of changes not handled yet (in order), and the keys to remember: those at or
 * above the new horizon, which the next poll reads again.
 */
function sortChanges(
  rows: Row['rows'],
  next: bigint,
  seen: ReadonlySet<string>,
): { fresh: string[]; nextSeen: Set<string> } {
  const fresh: string[] = [];
  const nextSeen = new Set<string>();
  for (const [xid, org] of rows) {
    const key = `${xid}:${org}`;
    if (BigInt(xid) >= next) {
      nextSeen.add(key);
    }
    if (!seen.has(key)) {
      fresh.push(org);
    }
  }
  return { fresh, nextSeen };
}

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
    const row = await readChanges(db, horizon);
    const next = BigInt(row.horizon);
    const reset = !wasHealthy;
    if (reset) {
      // First poll, or the first after polls failed for too long: whatever was cached may be stale.
      options.onReset();
      wasHealthy = true;
    }
    const { fresh, nextSeen } = sortChanges(row.rows, next, seen);
    if (!reset) {
      fresh.forEach((org) => options.onChange(org));
    }
    seen = nextSeen;
    horizon = next;
    lastOk = now();
    horizons.push({ at: lastOk, horizon: next });
    if (lastOk - lastCleanup >= Math.min(10_000, retentionMs)) {
      lastCleanup = lastOk;
      await deleteRead(db, horizons, lastOk - retentionMs);
    }
  };

  const tick = async () => {
    timer = undefined;
    if (closed) {
      return;
    }
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
        if (!healthy()) {
          wasHealthy = false;
        }
        if (!closed) {
          timer = setTimeout(() => void tick(), pollDelay(intervalMs, failures));
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
      clearTimeout(timer);
      await tick();
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      await running;
    },
  };
}
