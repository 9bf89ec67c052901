/**
 * A change made as another replica would make it: straight to the database, so this app hears
 * of it only through its change notifications (plugins/caches.ts, the config epoch).
 */
import { sql } from 'kysely';
import type { TestApp } from './app.js';
import { until } from './wait.js';

/** Runs `write`, then waits until the app's config epoch of `orgName` has moved because of it. */
export async function changeElsewhere(
  t: TestApp,
  orgName: string,
  write: () => Promise<unknown>,
): Promise<void> {
  const org = await sql<{ id: string }>`select id from orgs where name = ${orgName}`.execute(t.db.db);
  const orgId = org.rows[0]!.id;
  const epochs = t.app.caches.config;
  await notificationsHeard(t);
  const epoch = epochs.epoch(orgId);
  await write();
  await until(() => (epochs.epoch(orgId) !== epoch ? true : undefined));
}

/**
 * Waits until the app has heard every change notification committed so far (a new key's, for
 * instance, which clears the key cache when it arrives): notifications arrive in order, so once a
 * marker sent now is heard, every earlier one has been.
 */
export async function notificationsHeard(t: TestApp): Promise<void> {
  const marker = `marker-${Math.random()}`;
  await sql`select pg_notify('verity_config__' || current_schema(), ${marker})`.execute(t.db.db);
  await until(() => (t.app.caches.config.epoch(marker) !== 0 ? true : undefined));
}
