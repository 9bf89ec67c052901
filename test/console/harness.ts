/**
 * The server of the console's end-to-end tests: the real API serving the built console on the
 * embedded in-memory database, seeded with the demo organization. Only the global setup and the
 * screenshot script load it; test files reach it over HTTP.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { buildApp } from '../../services/api/src/app.js';
import { loadConfig } from '../../services/api/src/config.js';
import { DemoClock, seedDemo, type DemoSummary } from '../../services/api/src/demo/seed.js';
import { newId } from '../../services/api/src/ids.js';
import { openDatabase } from '../../services/api/src/storage/create-db.js';
import { migrateToLatest } from '../../services/api/src/storage/migrate.js';
import { orgsRepository } from '../../services/api/src/storage/repositories/orgs.js';
import { serviceAccountsRepository } from '../../services/api/src/storage/repositories/service-accounts.js';
import { createServiceAccountKey } from '../../services/api/src/usecases/access/api-keys.js';

const ROOT = join(import.meta.dirname, '..', '..');
/** The built console the API serves. */
export const CONSOLE_DIST = join(ROOT, 'services', 'console', 'dist');

/**
 * Builds the console when its dist is missing or older than its sources, as `npm start` does, so
 * the tests never judge a stale build.
 */
export function ensureConsoleBuilt(): void {
  execFileSync(process.execPath, [join(ROOT, 'services', 'console', 'scripts', 'build-if-stale.mjs')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (!existsSync(join(CONSOLE_DIST, 'index.html'))) {
    throw new Error(`the console build wrote no ${join(CONSOLE_DIST, 'index.html')}`);
  }
}

/** A free local port: the public URL must name the port before the app is built. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface ConsoleServer {
  baseUrl: string;
  demo: DemoSummary;
  /** An organization with nothing in it yet, and an admin key of it: the console's empty states. */
  empty: { org: string; apiKey: string };
  close(): Promise<void>;
}

/**
 * The API on `memory://`, seeded with `days` of demo history, listening on 127.0.0.1. Its public
 * URL is its own address, so every html_url it answers opens in the browser as it is.
 */
export async function startConsoleServer(
  options: {
    days?: number;
    consoleDir?: string;
    /** A dump of a migrated embedded database to start from (faster than migrating). */
    template?: Blob;
    /** The port to listen on (the identity provider must know the callback before the start). */
    port?: number;
    /** More settings, e.g. the identity provider's. */
    env?: Record<string, string>;
  } = {},
): Promise<ConsoleServer> {
  const port = options.port ?? (await freePort());
  const baseUrl = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    VERITY_DATA_DIR: 'memory://',
    VERITY_RATE_LIMIT_PER_MINUTE: '0',
    VERITY_NOTIFIER_ENABLED: 'false',
    VERITY_PUBLIC_URL: baseUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    ...options.env,
  });
  const handle = await openDatabase({
    dataDir: 'memory://',
    ...(options.template ? { loadDataDir: options.template } : {}),
  });
  await migrateToLatest(handle);
  const clock = new DemoClock();
  const app = await buildApp({
    config,
    database: handle,
    clock: clock.now,
    logger: false,
    consoleDir: options.consoleDir ?? CONSOLE_DIST,
  });
  try {
    await app.ready();
    const demo = await seedDemo({ app, db: handle.db, clock, days: options.days ?? 28 });
    const { org } = await orgsRepository.ensure(handle.db, {
      id: newId(),
      name: 'newcomer',
      display_name: 'Newcomer',
    });
    const account = await serviceAccountsRepository.insert(handle.db, {
      org_id: org.id,
      id: newId(),
      name: 'first-admin',
      description: '',
      privilege: 'admin',
      created_by_principal: 'system',
      created_by_name: 'system',
    });
    const { key } = await createServiceAccountKey(handle.db, {
      orgId: org.id,
      serviceAccountId: account!.id,
      description: 'empty organization',
      expiresAt: null,
      now: new Date(),
    });
    await app.listen({ port, host: '127.0.0.1' });
    return {
      baseUrl,
      demo,
      empty: { org: org.name, apiKey: key },
      async close() {
        await app.close();
        await handle.close();
      },
    };
  } catch (err) {
    await app.close();
    await handle.close();
    throw err;
  }
}
