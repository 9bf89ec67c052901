/**
 * A backup of an embedded database kept in a directory, in constant memory: PGlite's own dump
 * builds the whole archive in memory (it needs free memory the size of the database). Instead,
 * the data directory is copied file by file (the kernel's copy, no file read into memory) into a
 * staging directory beside the data, while PGlite runs no statement: PGlite runs its statements
 * on this thread, so between two of them the files are a consistent image (the write-ahead log
 * holds every committed change, replayed when the copy is opened). The copy is then streamed as
 * a tar in the layout PGlite's `loadDataDir` reads, and removed once sent or abandoned.
 */
import { createReadStream, readdirSync, rmSync } from 'node:fs';
import { cp, lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';

/** The staging directories, inside the data directory (the same volume: no other disk is needed). */
export const STAGING_PREFIX = '.verity-backup-';
/** Files of the data directory that are the process's, not the database's. */
const SKIPPED = /^(\.verity\.lock$|\.verity-backup-)/;

export interface Exclusive {
  runExclusive<T>(fn: () => Promise<T>): Promise<T>;
}

/** Copies `dataDir` while `engine` runs nothing, and streams the copy as a tar. */
export async function streamDataDirBackup(engine: Exclusive, dataDir: string): Promise<Readable> {
  const staging = await mkdtemp(join(dataDir, STAGING_PREFIX));
  try {
    await engine.runExclusive(async () => {
      // Entry by entry: the staging directory is inside the data directory, which cannot be copied whole.
      for (const name of await readdir(dataDir)) {
        if (!SKIPPED.test(name)) {
          await cp(join(dataDir, name), join(staging, name), { recursive: true, preserveTimestamps: true });
        }
      }
    });
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
  const out = new PassThrough();
  const pack = tar.pack();
  // A download that ends early (the client went away) stops the file being read, so no read
  // stream or file descriptor outlives it.
  const stop = new AbortController();
  out.once('close', () => stop.abort());
  const cleanup = () => void rm(staging, { recursive: true, force: true });
  void pipeline(pack, out).then(cleanup, cleanup);
  void writeEntries(pack, staging, '', stop.signal).then(
    () => pack.finalize(),
    (err: unknown) => pack.destroy(err as Error),
  );
  return out;
}

/** Each directory and file under `dir`, in PGlite's layout (names from the data directory's root). */
async function writeEntries(
  pack: tar.Pack,
  root: string,
  relative: string,
  signal: AbortSignal,
): Promise<void> {
  const dir = join(root, relative);
  const names = (await readdir(dir)).sort();
  for (const name of names) {
    signal.throwIfAborted();
    const path = join(dir, name);
    const rel = `${relative}/${name}`;
    const stat = await lstat(path);
    if (stat.isDirectory()) {
      pack.entry({ name: rel, type: 'directory', mode: stat.mode & 0o7777, mtime: stat.mtime });
      await writeEntries(pack, root, rel, signal);
    } else if (stat.isFile()) {
      const entry = pack.entry({
        name: rel,
        type: 'file',
        size: stat.size,
        mode: stat.mode & 0o7777,
        mtime: stat.mtime,
      });
      await pipeline(createReadStream(path), entry, { signal });
    }
  }
}

/** Staging directories a crash left behind: removed when the process takes the directory over. */
export function removeStaleStaging(dataDir: string): void {
  for (const name of readdirSync(dataDir)) {
    if (name.startsWith(STAGING_PREFIX)) {
      rmSync(join(dataDir, name), { recursive: true, force: true });
    }
  }
}
