/**
 * CPU time spent so far, from /proc (Linux; null elsewhere): the whole machine busy (user, nice,
 * system, irq, softirq and steal of all cores), one process with all its threads, and every
 * PostgreSQL server process. In seconds, so that two samples give what a stretch of work cost
 * and where.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

export interface CpuSample {
  machine: number;
  /** The process named (user and system time of all its threads). */
  process: number;
  /**
   * Every process whose command is `postgres` (backends, WAL writer, checkpointer...). A sum of
   * processes that come and go is no clock: `addCpu` counts, process by process, what each
   * present at the end spent since the start or since it began (`postgresByPid`).
   */
  postgres: number;
  postgresByPid?: Map<string, number>;
}

/** utime + stime of /proc/<pid>/stat, in ticks, with the command name; null when it is gone. */
function processTicks(pid: string): { comm: string; ticks: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    // After ") ": state, ppid, ... utime is the 14th field of the line, stime the 15th.
    const fields = stat.slice(close + 2).split(' ');
    return { comm, ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return null;
  }
}

export function cpuSample(pid: number): CpuSample | null {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = cpu;
    const machine = [user, nice, system, irq, softirq, steal].reduce((a: number, b) => a + (b ?? 0), 0);
    const postgresByPid = new Map<string, number>();
    for (const entry of readdirSync('/proc')) {
      if (/^\d+$/.test(entry)) {
        const p = processTicks(entry);
        if (p?.comm === 'postgres') {
          postgresByPid.set(entry, p.ticks / TICKS_PER_SECOND);
        }
      }
    }
    const own = processTicks(String(pid));
    return {
      machine: machine / TICKS_PER_SECOND,
      process: (own?.ticks ?? 0) / TICKS_PER_SECOND,
      postgres: [...postgresByPid.values()].reduce((a, b) => a + b, 0),
      postgresByPid,
    };
  } catch {
    return null;
  }
}

/** What was spent from `before` to `after`, added to `sum` (null when any is unknown). */
export function addCpu(
  sum: CpuSample | null,
  before: CpuSample | null,
  after: CpuSample | null,
): CpuSample | null {
  if (!sum || !before || !after) {
    return null;
  }
  // A process that started since `before` spent all it shows in between; one that ended took
  // what it spent since `before` with it (uncounted: a pool's connections rarely end under load).
  let postgres = 0;
  for (const [pid, spent] of after.postgresByPid ?? []) {
    postgres += spent - (before.postgresByPid?.get(pid) ?? 0);
  }
  return {
    machine: sum.machine + after.machine - before.machine,
    process: sum.process + after.process - before.process,
    postgres: sum.postgres + postgres,
  };
}
