/**
 * Backups of the embedded database: who may take one (it holds every organization's data), the
 * consistent dump PGlite makes while the server runs, and restoring one into a stopped data
 * directory. PostgreSQL installations back up with PostgreSQL's own tools.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { ApiError, ForbiddenError } from '../../errors.js';
import { lockDirectory, openDatabase } from '../../storage/create-db.js';
import type { Db } from '../../storage/database.js';
import { countOrgsAndMigrations } from '../../storage/probe.js';
import { usersRepository } from '../../storage/repositories/users.js';
import type { Principal } from './principal.js';

/** 501: this installation cannot do it (PostgreSQL has its own backup tools). */
export class BackupUnsupportedError extends ApiError {
  constructor() {
    super(
      501,
      'This server uses PostgreSQL: back it up with pg_dump or the continuous backups (PITR) of your PostgreSQL operator; this endpoint backs up the embedded database only',
    );
  }
}

/**
 * A backup holds every organization, so only admins of the installation's administrative
 * organization (VERITY_BACKUP_ORG, never an admin of just any organization) may take one. Only
 * members of that organization learn its name from the refusal: to anyone else it is one more
 * phishing target.
 */
export async function assertMayBackUp(db: Db, principal: Principal, backupOrg: string): Promise<void> {
  const generic = new ForbiddenError(
    "A backup holds every organization's data: only admins of the installation's backup organization may take one",
  );
  const precise = new ForbiddenError(
    `A backup holds every organization's data: only admins of the organization '${backupOrg}' may take one`,
  );
  if (principal.kind === 'service_account') {
    if (principal.homeOrg?.name !== backupOrg) {
      throw generic;
    }
    if (principal.privilege !== 'admin') {
      throw precise;
    }
    return;
  }
  const membership = await usersRepository.membershipByOrgName(db, principal.id, backupOrg);
  if (!membership) {
    throw generic;
  }
  if (membership.role !== 'admin') {
    throw precise;
  }
}

/** The dump as a stream (a tar of the data directory), or 501 on PostgreSQL. */
export async function backupStream(dump: (() => Promise<Readable>) | undefined): Promise<Readable> {
  if (!dump) {
    throw new BackupUnsupportedError();
  }
  return dump();
}

/** A restore that cannot go ahead; the CLI prints the message. */
export class RestoreRefusedError extends Error {}

/** What a restore found in the archive. */
export interface RestoreResult {
  organizations: number;
  migrations: number;
}

/** Opens the archive as a database and reads it: throws unless it is a Verity database. */
async function inspect(handle: Awaited<ReturnType<typeof openDatabase>>): Promise<RestoreResult> {
  try {
    return await countOrgsAndMigrations(handle.db);
  } catch (err) {
    throw new RestoreRefusedError(`the archive is not a Verity database: ${(err as Error).message}`);
  }
}

/**
 * Restores a backup into a stopped data directory: refuses a directory a running server holds,
 * refuses one with data unless `force`, and checks the archive is a readable Verity database
 * before anything in the directory is touched.
 */
export async function restoreBackup(
  archive: Blob,
  dataDir: string,
  options: { force: boolean },
): Promise<RestoreResult> {
  // Held until the archive is in: no server may open the directory meanwhile.
  let release = () => {};
  if (existsSync(dataDir)) {
    try {
      release = lockDirectory(dataDir);
    } catch (err) {
      throw new RestoreRefusedError((err as Error).message);
    }
  }
  try {
    const entries = existsSync(dataDir) ? readdirSync(dataDir).filter((f) => f !== '.verity.lock') : [];
    if (entries.length > 0 && !options.force) {
      throw new RestoreRefusedError(
        `'${dataDir}' is not empty (it holds a database); pass --force to replace it with the backup`,
      );
    }
    // The archive is read as a database before anything in the directory goes.
    let probe;
    try {
      probe = await openDatabase({ dataDir: 'memory://', loadDataDir: archive });
    } catch (err) {
      throw new RestoreRefusedError(`the archive is not a data directory dump: ${(err as Error).message}`);
    }
    try {
      await inspect(probe);
    } finally {
      await probe.close();
    }
    for (const entry of entries) {
      rmSync(join(dataDir, entry), { recursive: true, force: true });
    }
  } finally {
    release();
  }
  const restored = await openDatabase({ dataDir, loadDataDir: archive });
  try {
    return await inspect(restored);
  } finally {
    await restored.close();
  }
}
