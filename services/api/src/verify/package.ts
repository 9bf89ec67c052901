/**
 * Offline verification of an audit package: every file against `MANIFEST.sha256`, the
 * checkpoint's signature, every log entry's inclusion in the checkpoint, every record of
 * `log/records/` included at its entry's index (its leaf computed from the package's own bytes),
 * and the package's record and evidence files against those records. Returns the lines of what
 * was checked, or throws naming the first failure.
 */
import { createHash } from 'node:crypto';
import { createGunzip } from 'node:zlib';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { inclusionOk, leafOf, openCheckpoint, VerifyError, type Checkpoint } from './checks.js';
import { checkViews, type Proven } from './views.js';

export { VerifyError };

interface Entry {
  index: number;
  hashes: Buffer[];
}

async function untar(gz: Buffer): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const extract = tar.extract();
  const done = new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => void chunks.push(c as Buffer));
      stream.on('end', () => {
        files.set(header.name, Buffer.concat(chunks));
        next();
      });
      stream.on('error', reject);
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
  });
  Readable.from(gz)
    .pipe(createGunzip())
    .on('error', (e) => extract.destroy(e))
    .pipe(extract);
  await done;
  return files;
}

const parse = (files: Map<string, Buffer>, name: string): Record<string, unknown> => {
  try {
    return JSON.parse(files.get(name)!.toString('utf8')) as Record<string, unknown>;
  } catch {
    throw new VerifyError(`${name} is not JSON`);
  }
};

/** Every member against MANIFEST.sha256, and no member left out of it. */
function checkManifest(files: Map<string, Buffer>): string {
  const manifest = files.get('MANIFEST.sha256');
  if (!manifest) {
    throw new VerifyError('MANIFEST.sha256 is missing');
  }
  const listed = new Set<string>();
  for (const line of manifest
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '')) {
    const m = /^([0-9a-f]{64}) {2}(.+)$/.exec(line);
    if (!m) {
      throw new VerifyError(`MANIFEST.sha256: malformed line '${line.slice(0, 100)}'`);
    }
    const content = files.get(m[2]!);
    if (!content) {
      throw new VerifyError(`${m[2]}: listed in MANIFEST.sha256 but missing`);
    }
    if (createHash('sha256').update(content).digest('hex') !== m[1]) {
      throw new VerifyError(`${m[2]}: its SHA-256 differs from MANIFEST.sha256`);
    }
    listed.add(m[2]!);
  }
  for (const name of files.keys()) {
    if (name !== 'MANIFEST.sha256' && !listed.has(name)) {
      throw new VerifyError(`${name}: not listed in MANIFEST.sha256`);
    }
  }
  return `ok  ${listed.size} files match MANIFEST.sha256`;
}

/** Each log entry's inclusion in the checkpoint; the entries by `kind:id`. */
function checkEntries(files: Map<string, Buffer>, cp: Checkpoint): Map<string, Entry> {
  const entries = new Map<string, Entry>();
  for (const name of [...files.keys()].filter((n) => n.startsWith('log/entries/')).sort()) {
    const e = parse(files, name);
    const index = Number(e.index);
    const inclusion = e.inclusion as { tree_size?: unknown; hashes?: unknown } | undefined;
    const hashes = Array.isArray(inclusion?.hashes)
      ? inclusion.hashes.map((h) => Buffer.from(String(h), 'base64'))
      : [];
    if (Number(inclusion?.tree_size) !== cp.size) {
      throw new VerifyError(
        `${name}: its proof is for tree size ${String(inclusion?.tree_size)}, the checkpoint's is ${cp.size}`,
      );
    }
    if (!inclusionOk(index, cp.size, leafOf(e.record), hashes, cp.root)) {
      throw new VerifyError(`${name}: entry ${index} is not included in the checkpoint`);
    }
    const record = e.record as { kind?: unknown; id?: unknown };
    entries.set(`${String(record.kind)}:${String(record.id)}`, { index, hashes });
  }
  return entries;
}

/**
 * Each record as the package holds it, included in the checkpoint at its entry's index: the leaf
 * is computed from the record file, the entry file gives only the index and the proof.
 */
function checkRecords(files: Map<string, Buffer>, entries: Map<string, Entry>, cp: Checkpoint): Proven {
  const proven: Proven = new Map();
  for (const name of [...files.keys()].filter((n) => n.startsWith('log/records/')).sort()) {
    const r = parse(files, name);
    const label = `${String(r.kind)} ${String(r.id)}`;
    const entry = entries.get(`${String(r.kind)}:${String(r.id)}`);
    if (r.log_index === null || !entry) {
      throw new VerifyError(`${label} (${name}): not in the log yet`);
    }
    if (r.record === null) {
      throw new VerifyError(`${label} (${name}): the record is missing from the database`);
    }
    if (!inclusionOk(entry.index, cp.size, leafOf(r.record), entry.hashes, cp.root)) {
      throw new VerifyError(`${label} (${name}): the record does not match its log entry ${entry.index}`);
    }
    proven.set(`${String(r.kind)}:${String(r.id)}`, {
      index: entry.index,
      record: r.record as Record<string, unknown>,
    });
  }
  return proven;
}

/** Verifies the package; `pinnedKeys` (verifier keys the auditor trusts) replace the package's own. */
export async function verifyPackage(gz: Buffer, pinnedKeys?: string[]): Promise<string[]> {
  let files: Map<string, Buffer>;
  try {
    files = await untar(gz);
  } catch (err) {
    throw new VerifyError(`not a .tar.gz audit package: ${(err as Error).message}`);
  }
  const out = [checkManifest(files)];
  const note = files.get('log/checkpoint');
  if (!note) {
    throw new VerifyError(
      'log/checkpoint is missing: the package carries no proof from the transparency log',
    );
  }
  const keys =
    pinnedKeys ??
    files
      .get('log/key')
      ?.toString('utf8')
      .split('\n')
      .filter((l) => l !== '') ??
    [];
  let cp: Checkpoint;
  try {
    cp = openCheckpoint(note.toString('utf8'), keys);
  } catch (err) {
    throw new VerifyError(`log/checkpoint: ${(err as Error).message}`);
  }
  out.push(
    `ok  checkpoint of ${cp.origin} at size ${cp.size} signed by ${pinnedKeys ? 'the pinned key' : 'the key in log/key (pin it with --key)'}`,
  );
  const entries = checkEntries(files, cp);
  out.push(`ok  ${entries.size} log entries included in the checkpoint`);
  const proven = checkRecords(files, entries, cp);
  out.push(`ok  ${proven.size} records match their log entries`);
  const views = checkViews(files, proven, (name) => parse(files, name));
  out.push(
    `ok  ${views.records} record files and ${views.evidence} evidence files match the records the log proves`,
  );
  for (const name of views.absent) {
    out.push(
      `note  ${name}: its evidence file is not in the package (removed by a retention rule, or missing)`,
    );
  }
  return out;
}
