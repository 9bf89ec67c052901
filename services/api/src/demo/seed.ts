/**
 * A demo organization with a few weeks of history: flows with templates, trails with every kind
 * of attestation (some slots missing, one overridden), three K8S environments with dozens of
 * snapshots each, policies attached. Everything is sent as the kosli CLI sends it, through the
 * API (`inject`), while a clock the seeding controls walks from weeks ago to now. The parts are
 * in `seed/`, by what they seed.
 */
import type { FastifyInstance } from 'fastify';
import { newId } from '../ids.js';
import type { Db } from '../storage/database.js';
import { orgsRepository } from '../storage/repositories/orgs.js';
import { serviceAccountsRepository } from '../storage/repositories/service-accounts.js';
import { createServiceAccountKey } from '../usecases/access/api-keys.js';
import { seedCliFlows } from './seed/cli-flows.js';
import { planBuilds } from './seed/plan.js';
import { DemoRuntime, seedHistory } from './seed/runtime.js';
import { DEMO_FLOWS, DEMO_POLICIES, seedSetup } from './seed/setup.js';
import { DAY, HOUR, MINUTE, createWire } from './seed/wire.js';

export { junitResults } from './seed/evidence.js';

/** The service account the demo signs in with. */
export const DEMO_ACCOUNT = 'demo-admin';

/**
 * The server's clock during seeding: it stands where the seeding puts it, and follows the real
 * time once released, so the same server can keep serving afterwards.
 */
export class DemoClock {
  private fixed: number | undefined;
  now = (): Date => new Date(this.fixed ?? Date.now());
  set(at: number): void {
    this.fixed = at;
  }
  release(): void {
    this.fixed = undefined;
  }
}

/** Thrown when the organization already exists: the demo never writes into a used org. */
export class DemoOrgExistsError extends Error {
  constructor(readonly org: string) {
    super(`organization '${org}' already exists`);
    this.name = 'DemoOrgExistsError';
  }
}

export interface SeedDemoOptions {
  app: FastifyInstance;
  db: Db;
  /** The clock `app` was built with. */
  clock: DemoClock;
  org?: string;
  /** Days of history (default 28). Fewer days seed faster with the same kinds of data. */
  days?: number;
  /** Where history ends (default: the real time now, less a few minutes). */
  end?: Date;
}

export interface DemoSummary {
  org: string;
  apiKey: string;
  flows: string[];
  trails: number;
  artifacts: number;
  attestations: number;
  environments: Record<string, number>;
  policies: string[];
}

/** Seeds the demo organization through `app`; returns its name, an admin key and what it made. */
export async function seedDemo(options: SeedDemoOptions): Promise<DemoSummary> {
  try {
    return await seedOrg(options);
  } finally {
    // whatever happened, the server goes on with the real time
    options.clock.release();
  }
}

async function seedOrg(options: SeedDemoOptions): Promise<DemoSummary> {
  const { app, clock } = options;
  const org = options.org ?? 'acme';
  const days = Math.max(4, Math.floor(options.days ?? 28));
  const end = (options.end ?? new Date(Date.now() - 5 * MINUTE)).getTime();
  const start = end - days * DAY;
  const apiKey = await createDemoAdmin(options, org, start - HOUR);
  const w = createWire({ app, apiKey, org, at: (ms) => clock.set(ms) });
  await seedSetup(w);
  const runtime = new DemoRuntime(w);
  await seedHistory(w, runtime, { builds: planBuilds(start, end), start, end, days });
  await seedCliFlows(w, end);
  await runtime.beat(end);
  return {
    org,
    apiKey,
    flows: [...DEMO_FLOWS],
    ...w.counts,
    environments: runtime.snapshots,
    policies: [...DEMO_POLICIES],
  };
}

/** The new organization, its admin service account and a key of it, at `at`. */
async function createDemoAdmin(options: SeedDemoOptions, org: string, at: number): Promise<string> {
  const { db, clock } = options;
  const { org: orgRow, created } = await orgsRepository.ensure(db, {
    id: newId(),
    name: org,
    display_name: org === 'acme' ? 'Acme Corp' : org,
  });
  if (!created) {
    throw new DemoOrgExistsError(org);
  }
  clock.set(at);
  const account = await serviceAccountsRepository.insert(db, {
    org_id: orgRow.id,
    id: newId(),
    name: DEMO_ACCOUNT,
    description: 'Demo administrator (npm run demo)',
    privilege: 'admin',
    created_by_principal: 'system',
    created_by_name: 'demo',
  });
  if (!account) {
    throw new Error(`service account '${DEMO_ACCOUNT}' exists in a new organization`);
  }
  const { key } = await createServiceAccountKey(db, {
    orgId: orgRow.id,
    serviceAccountId: account.id,
    description: 'demo sign-in key',
    expiresAt: null,
    now: clock.now(),
  });
  return key;
}
