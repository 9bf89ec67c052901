/** Where an artifact ran, read from its record: one run per environment, from snapshot to snapshot. */
import type { ArtifactRecord } from '../../lib/contract.js';

export interface Run {
  env: string;
  /** null: it started before the history the record carries (its first and latest events). */
  from: { index: number; at: number } | null;
  /** null while it still runs. */
  to: { index: number; at: number } | null;
}

const STARTED = /^Started running in (.+)#(\d+)$/;
const EXITED = /^Exited from (.+)#(\d+)$/;

/** Runs per environment from the artifact's history, oldest first; an open run is still running. */
export function runsOf(a: Pick<ArtifactRecord, 'history' | 'running' | 'exited'>): Run[] {
  const runs: Run[] = [];
  const open = new Map<string, Run>();
  for (const h of [...a.history].sort((x, y) => x.timestamp - y.timestamp)) {
    const s = STARTED.exec(h.event);
    if (s?.[1] && s[2]) {
      const run: Run = { env: s[1], from: { index: Number(s[2]), at: h.timestamp }, to: null };
      open.set(s[1], run);
      runs.push(run);
      continue;
    }
    const e = EXITED.exec(h.event);
    if (e?.[1] && e[2]) {
      const run = open.get(e[1]);
      if (run) {
        run.to = { index: Number(e[2]), at: h.timestamp };
        open.delete(e[1]);
      }
    }
  }
  // Exits the record lists whose run is older than its history (it carries the latest events).
  for (const x of a.exited) {
    if (!runs.some((r) => r.env === x.environment_name && r.to?.index === x.snapshot_index)) {
      runs.push({ env: x.environment_name, from: null, to: { index: x.snapshot_index, at: 0 } });
    }
  }
  // Places the record lists as running but whose start is older than its history.
  for (const r of a.running) {
    if (!runs.some((x) => x.env === r.environment_name && x.to === null)) {
      runs.push({ env: r.environment_name, from: { index: r.snapshot_index, at: 0 }, to: null });
    }
  }
  return runs;
}
