/**
 * Builds the real API on a test database, with a test clock, and seeds organizations and keys
 * through the same use cases the product uses.
 */
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp } from '../../services/api/src/app.js';
import { loadConfig, type Config } from '../../services/api/src/config.js';
import type { DatabaseHandle } from '../../services/api/src/storage/create-db.js';
import type { Role } from '../../services/api/src/domain/roles.js';
import { newId } from '../../services/api/src/ids.js';
import { orgsRepository } from '../../services/api/src/storage/repositories/orgs.js';
import { serviceAccountsRepository } from '../../services/api/src/storage/repositories/service-accounts.js';
import { createServiceAccountKey } from '../../services/api/src/usecases/access/api-keys.js';
import type { ProvenancePort } from '../../services/api/src/usecases/scope/provenance.js';
import { TestClock } from './clock.js';
import { createTestDatabase } from './database.js';

/** Test configuration: quiet, no rate limit unless asked. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    LOG_LEVEL: 'silent',
    VERITY_RATE_LIMIT_PER_MINUTE: '0',
    VERITY_AUTH_FAILURES_PER_MINUTE: '0',
    VERITY_PUBLIC_URL: 'http://verity.test',
    // Tests drive the workers by hand unless they ask for them.
    VERITY_NOTIFIER_ENABLED: 'false',
    ...env,
  });
}

export interface TestApp {
  app: FastifyInstance;
  db: DatabaseHandle;
  clock: TestClock;
  /** Creates (or reuses) an org and returns a key of a new service account with `role` in it. */
  seedKey(org: string, role?: Role, options?: { expiresAt?: Date }): Promise<string>;
  close(): Promise<void>;
}

/** The real app on a fresh database. */
export async function createTestApp(
  options: { env?: Record<string, string>; clock?: TestClock; provenance?: ProvenancePort } = {},
): Promise<TestApp> {
  const db = await createTestDatabase();
  const clock = options.clock ?? new TestClock();
  const app = await buildApp({
    config: testConfig(options.env),
    database: db,
    clock: clock.now,
    logger: false,
    ...(options.provenance ? { provenance: options.provenance } : {}),
  });
  await app.ready();
  let counter = 0;
  return {
    app,
    db,
    clock,
    async seedKey(orgName, role = 'admin', opts = {}) {
      const { org } = await orgsRepository.ensure(db.db, {
        id: newId(),
        name: orgName,
        display_name: orgName,
      });
      counter += 1;
      const account = await serviceAccountsRepository.insert(db.db, {
        org_id: org.id,
        id: newId(),
        name: `seed-${role}-${counter}`,
        description: '',
        privilege: role,
        created_by_principal: 'system',
        created_by_name: 'system',
      });
      if (!account) {
        throw new Error('seed account exists');
      }
      const { key } = await createServiceAccountKey(db.db, {
        orgId: org.id,
        serviceAccountId: account.id,
        description: 'seed',
        expiresAt: opts.expiresAt ?? null,
        now: clock.now(),
      });
      return key;
    },
    async close() {
      await app.close();
      await db.close();
    },
  };
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  json: any;
}

/** A small client over `inject`, sending what the kosli CLI sends (JSON with charset). */
export function client(app: FastifyInstance, key?: string) {
  const send = async (
    method: InjectOptions['method'],
    url: string,
    payload?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply> => {
    const res = await app.inject({
      method,
      url,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(payload !== undefined ? { 'content-type': 'application/json; charset=utf-8' } : {}),
        ...headers,
      },
      ...(payload !== undefined ? { payload: JSON.stringify(payload) } : {}),
    });
    let json: unknown;
    try {
      json = res.body === '' ? undefined : JSON.parse(res.body);
    } catch {
      json = undefined;
    }
    return { status: res.statusCode, headers: res.headers, body: res.body, json };
  };
  return {
    get: (url: string, headers?: Record<string, string>) => send('GET', url, undefined, headers),
    post: (url: string, body?: unknown) => send('POST', url, body),
    put: (url: string, body?: unknown) => send('PUT', url, body),
    patch: (url: string, body?: unknown) => send('PATCH', url, body),
    delete: (url: string, body?: unknown) => send('DELETE', url, body),
    send,
  };
}
