/**
 * `npm run bench -- backup`: the API process's memory while `npm run admin -- backup` downloads a
 * backup of a large embedded database kept in a directory. The database is filled with
 * BENCH_BACKUP_MIB MiB (default 256) of incompressible rows; the API runs as production runs it
 * (`services/api/src/main.ts` in its own process) and its resident memory is sampled from /proc
 * during the backup, while a reader measures how long database requests wait for the copy.
 * Target: growth below 64 MiB, whatever the size of the database.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backupCommand } from '../services/api/src/admin-backup.js';
import { sql } from 'kysely';
import { openDatabase } from '../services/api/src/storage/create-db.js';
import type { BenchContext, BenchFigure } from './harness.js';

const MIB = 1024 * 1024;
const TARGET_GROWTH_MIB = 64;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
      .once('error', reject)
      .listen(0, '127.0.0.1', () => {
        const port = (srv.address() as { port: number }).port;
        srv.close(() => resolve(port));
      });
  });
}

/** Resident memory of a process, from /proc (Linux). */
function rssBytes(pid: number): number {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return line ? Number(line[1]) * 1024 : 0;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Fills the data directory with `mib` MiB of rows PostgreSQL cannot compress. */
async function fill(dataDir: string, mib: number, log: (l: string) => void): Promise<void> {
  const handle = await openDatabase({ dataDir });
  try {
    await sql`create table bench_fill (id int primary key, body text)`.execute(handle.db);
    // Stored as is: no TOAST compression, so the directory is the size written.
    await sql`alter table bench_fill alter column body set storage external`.execute(handle.db);
    const rowBytes = 64 * 1024;
    const rows = Math.ceil((mib * MIB) / rowBytes);
    for (let i = 0; i < rows; i += 64) {
      const values = Array.from({ length: Math.min(64, rows - i) }, (_, k) => ({
        id: i + k,
        body: randomBytes(rowBytes / 2).toString('hex'),
      }));
      await sql`insert into bench_fill (id, body) select * from json_to_recordset(${JSON.stringify(values)}::json) as x(id int, body text)`.execute(
        handle.db,
      );
    }
    log(`filled ${rows} rows of 64 KiB`);
  } finally {
    await handle.close();
  }
}

export default async function run(ctx: BenchContext): Promise<BenchFigure[]> {
  const log = (line: string) => ctx.log(line);
  const mib = Number(process.env.BENCH_BACKUP_MIB ?? 256);
  const dir = mkdtempSync(join(tmpdir(), 'verity-bench-backup-'));
  const dataDir = join(dir, 'data');
  const key = `vty_bench-${randomBytes(16).toString('hex')}`;
  try {
    await fill(dataDir, mib, log);
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', join('services', 'api', 'src', 'main.ts')], {
      env: {
        ...process.env,
        DATABASE_URL: '',
        VERITY_DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        VERITY_METRICS_PORT: '0',
        LOG_LEVEL: 'warn',
        VERITY_BOOTSTRAP_ORG: 'bench',
        VERITY_BOOTSTRAP_API_KEY: key,
        VERITY_BACKUP_ORG: 'bench',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    try {
      const url = `http://127.0.0.1:${port}`;
      for (let i = 0; ; i++) {
        const ready = await fetch(`${url}/readyz`).catch(() => undefined);
        if (ready?.status === 200) {
          break;
        }
        if (i > 600 || child.exitCode !== null) {
          throw new Error('the API did not get ready');
        }
        await sleep(200);
      }
      // Settled: a few requests, then the resident memory before the backup.
      for (let i = 0; i < 20; i++) {
        await fetch(`${url}/api/v2/flows/bench`, { headers: { authorization: `Bearer ${key}` } });
      }
      await sleep(1_000);
      const before = rssBytes(child.pid!);
      let peak = before;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          peak = Math.max(peak, rssBytes(child.pid!));
          await sleep(20);
        }
      })();
      // A reader of the database meanwhile: it waits while the data directory is copied.
      let slowestMs = 0;
      const reader = (async () => {
        while (sampling) {
          const t0 = performance.now();
          await fetch(`${url}/api/v2/flows/bench`, { headers: { authorization: `Bearer ${key}` } });
          slowestMs = Math.max(slowestMs, performance.now() - t0);
          await sleep(50);
        }
      })();
      const file = join(dir, 'backup.tar');
      const started = performance.now();
      try {
        await backupCommand(['backup', file], { VERITY_URL: url, VERITY_API_KEY: key });
      } finally {
        sampling = false;
        await Promise.all([sampler, reader]);
      }
      const seconds = (performance.now() - started) / 1000;
      const size = statSync(file).size;
      const growth = (peak - before) / MIB;
      log(
        `backup of ${(size / MIB).toFixed(0)} MiB in ${seconds.toFixed(1)} s; API RSS ${(before / MIB).toFixed(0)} MiB before, peak ${(peak / MIB).toFixed(0)} MiB; slowest read meanwhile ${slowestMs.toFixed(0)} ms (it waits while the directory is copied)`,
      );
      return [
        {
          name: `API memory growth during a ${(size / MIB).toFixed(0)} MiB backup`,
          value: `${growth.toFixed(1)} MiB`,
          target: `< ${TARGET_GROWTH_MIB} MiB`,
          pass: growth < TARGET_GROWTH_MIB,
        },
      ];
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
