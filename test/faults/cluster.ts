/**
 * Private PostgreSQL clusters for fault tests: made with the installed server's `initdb` in a
 * temporary directory, on a free port, run as `postgres` when the tests run as root, and removed
 * afterwards. The shared server of the other tests is never touched.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The installed server's programs (the newest version when several are installed). */
export function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) {
    return undefined;
  }
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : undefined;
}

const isRoot = process.getuid?.() === 0;

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
      .once('error', reject)
      .listen(0, '127.0.0.1', () => {
        const port = (srv.address() as { port: number }).port;
        srv.close(() => resolve(port));
      });
  });
}

/** Runs a server program, as `postgres` when we are root (the server refuses to run as root). */
function run(bin: string, program: string, args: string[], options: { allowFailure?: boolean } = {}): string {
  const [cmd, argv] = isRoot
    ? ['runuser', ['-u', 'postgres', '--', join(bin, program), ...args]]
    : [join(bin, program), args];
  const result = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0 && !options.allowFailure) {
    throw new Error(
      `${program} ${args.join(' ')} failed (${result.status}): ${result.stderr}${result.stdout}`,
    );
  }
  return result.stdout;
}

export interface Cluster {
  port: number;
  /** A URL of the cluster's `postgres` database. */
  url: string;
  dataDir: string;
  start(): void;
  /** `pg_ctl stop` in the given mode; `immediate` is a crash (no checkpoint, recovery on start). */
  stop(mode?: 'fast' | 'immediate'): void;
  promote(): void;
  /** Runs SQL with psql and returns its output (unaligned, tuples only). */
  sql(text: string): string;
  running(): boolean;
}

/** Temporary directories of clusters, removed by `removeAll`. */
export class Clusters {
  private readonly dirs: string[] = [];
  private readonly clusters: Cluster[] = [];
  readonly bin: string;

  constructor() {
    const bin = postgresBin();
    if (!bin) {
      throw new Error('No PostgreSQL server installed under /usr/lib/postgresql');
    }
    this.bin = bin;
  }

  private tempDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'verity-fault-'));
    if (isRoot) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
      chownSync(dir, uid, gid);
    }
    chmodSync(dir, 0o700);
    this.dirs.push(dir);
    return dir;
  }

  /** A new primary, started. */
  async primary(): Promise<Cluster> {
    const dir = this.tempDir();
    const dataDir = join(dir, 'data');
    run(this.bin, 'initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    const cluster = await this.cluster(dir, dataDir);
    cluster.start();
    return cluster;
  }

  /** A streaming standby of `primary` (pg_basebackup -R), started. */
  async standby(primary: Cluster): Promise<Cluster> {
    const dir = this.tempDir();
    const dataDir = join(dir, 'data');
    run(this.bin, 'pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-D',
      dataDir,
      '-R',
      '-X',
      'stream',
      '--no-sync',
    ]);
    const cluster = await this.cluster(dir, dataDir);
    cluster.start();
    return cluster;
  }

  private async cluster(dir: string, dataDir: string): Promise<Cluster> {
    const port = await freePort();
    const bin = this.bin;
    const log = join(dir, 'server.log');
    // Settings on the command line: a standby copies the primary's files, not its port.
    const opts = [
      `-p ${port}`,
      `-k ${dir}`,
      "-c listen_addresses='127.0.0.1'",
      '-c fsync=off',
      '-c shared_buffers=16MB',
      '-c max_connections=60',
      '-c wal_level=replica',
      '-c max_wal_senders=4',
      '-c hot_standby=on',
      '-c wal_sender_timeout=5s',
      '-c wal_receiver_status_interval=1s',
    ].join(' ');
    const cluster: Cluster = {
      port,
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      dataDir,
      start() {
        run(bin, 'pg_ctl', ['-D', dataDir, '-l', log, '-w', '-t', '60', '-o', opts, 'start']);
        waitReady(bin, port);
      },
      stop(mode = 'fast') {
        run(bin, 'pg_ctl', ['-D', dataDir, '-m', mode, '-w', 'stop'], { allowFailure: true });
      },
      promote() {
        run(bin, 'pg_ctl', ['-D', dataDir, '-w', '-t', '60', 'promote']);
        waitReady(bin, port);
      },
      sql(text) {
        return run(bin, 'psql', [
          '-h',
          '127.0.0.1',
          '-p',
          String(port),
          '-U',
          'postgres',
          '-Atq',
          '-c',
          text,
        ]);
      },
      running() {
        return (
          spawnSync(join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-t', '1']).status === 0
        );
      },
    };
    this.clusters.push(cluster);
    return cluster;
  }

  /** Stops every cluster and removes its directory; never throws. */
  removeAll(): void {
    for (const c of this.clusters) {
      try {
        c.stop('immediate');
      } catch {
        // already gone
      }
    }
    for (const d of this.dirs) {
      rmSync(d, { recursive: true, force: true });
    }
  }
}

function waitReady(bin: string, port: number): void {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const r = spawnSync(join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-t', '2']);
    if (r.status === 0) {
      return;
    }
    spawnSync('sleep', ['0.1']);
  }
  throw new Error(`PostgreSQL on port ${port} did not become ready`);
}
