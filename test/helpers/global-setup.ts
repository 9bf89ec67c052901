/**
 * Runs once per test run: migrates one embedded database and dumps it, so every test file starts
 * from a copy in well under a second instead of initialising PGlite from scratch.
 */
import { writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../services/api/src/storage/create-db.js';
import { migrateToLatest } from '../../services/api/src/storage/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const path = join(tmpdir(), `verity-pglite-template-${process.pid}.tar`);
  const handle = await openDatabase({ dataDir: 'memory://' });
  await migrateToLatest(handle);
  const chunks: Buffer[] = [];
  for await (const chunk of await handle.dump!()) {
    chunks.push(chunk as Buffer);
  }
  writeFileSync(path, Buffer.concat(chunks));
  await handle.close();
  project.provide('pgliteTemplate', path);
  return () => rmSync(path, { force: true });
}
