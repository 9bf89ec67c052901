/**
 * `npm run admin -- backup FILE` (through a running server's API) and
 * `npm run admin -- restore FILE` (into a stopped embedded data directory).
 */
import { createWriteStream, openAsBlob, renameSync, rmSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { AdminUsageError } from './admin-commands.js';
import { restoreBackup } from './usecases/access/backup.js';

export const BACKUP_USAGE = `  backup <file> [--url <server>] [--api-key <key>]
      a consistent backup of the running server's embedded database (VERITY_URL, VERITY_API_KEY:
      an admin key of VERITY_BACKUP_ORG)
  restore <file> [--data-dir <dir>] [--force]
      restore a backup into a stopped server's data directory (VERITY_DATA_DIR); --force replaces
      a directory that holds a database`;

/** Downloads a backup from the server into `file` (written aside, then renamed: never half a file). */
export async function backupCommand(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
): Promise<string[]> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { url: { type: 'string' }, 'api-key': { type: 'string' } },
  });
  const file = positionals[1];
  if (!file) {
    throw new AdminUsageError('missing the file to write the backup to');
  }
  const url = (values.url ?? env.VERITY_URL ?? 'http://localhost:8080').replace(/\/+$/, '');
  const key = values['api-key'] ?? env.VERITY_API_KEY;
  if (!key) {
    throw new AdminUsageError('an admin API key is needed: --api-key or VERITY_API_KEY');
  }
  let res: Response;
  try {
    res = await fetch(`${url}/api/v2/admin/backup`, { headers: { authorization: `Bearer ${key}` } });
  } catch (err) {
    throw new AdminUsageError(`cannot reach ${url}: ${(err as Error).message}`);
  }
  if (res.status !== 200 || !res.body) {
    const text = await res.text();
    let message = text;
    try {
      message = (JSON.parse(text) as { message?: string }).message ?? text;
    } catch {
      // not JSON: the text as it came
    }
    throw new AdminUsageError(`the server refused the backup (HTTP ${res.status}): ${message}`);
  }
  const partial = `${file}.partial`;
  try {
    await pipeline(Readable.fromWeb(res.body), createWriteStream(partial));
    renameSync(partial, file);
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  }
  return [`backup written to ${file}`];
}

/** Restores `file` into the data directory of a stopped server. */
export async function restoreCommand(argv: string[], defaultDataDir: string): Promise<string[]> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { 'data-dir': { type: 'string' }, force: { type: 'boolean', default: false } },
  });
  const file = positionals[1];
  if (!file) {
    throw new AdminUsageError('missing the backup file to restore');
  }
  const dataDir = values['data-dir'] ?? defaultDataDir;
  let archive: Blob;
  try {
    archive = await openAsBlob(file);
  } catch (err) {
    throw new AdminUsageError(`cannot read '${file}': ${(err as Error).message}`);
  }
  const result = await restoreBackup(archive, dataDir, { force: values.force ?? false });
  return [
    `restored ${file} into ${dataDir}: ${result.organizations} organizations, ${result.migrations} migrations applied`,
    'start the server on it: it applies any newer migrations',
  ];
}
