/**
 * The organization's environments now (`GET /environments-now/{org}`), for its home page in one
 * request: a page of environments by name, each with what runs in it now (the first few by name,
 * and how many), and how many deployments started there since a given time.
 */
import type { z } from 'zod';
import { NAMED_RUNNING, type EnvironmentsNowPage } from '../../../../shared/contract/insight.js';
import { epochSeconds } from '../../time.js';
import { deliveryReads } from '../../storage/repositories/delivery-reads.js';
import { environmentsRepository } from '../../storage/repositories/environments.js';
import { presentEnvironments } from './environment-present.js';
import { apiUrl } from '../scope/links.js';
import type { OrgScope } from '../scope/org-scope.js';

/** The deployments counted by default: those of the last week. */
const DEFAULT_SINCE_DAYS = 7;

export async function environmentsNow(
  scope: OrgScope,
  req: { since?: Date | undefined; page: number; perPage: number },
): Promise<z.infer<typeof EnvironmentsNowPage>> {
  const { db, org } = scope;
  const since = req.since ?? new Date(scope.now.getTime() - DEFAULT_SINCE_DAYS * 86_400_000);
  const { rows, total } = await environmentsRepository.list(db, org.id, {
    sort: 'name',
    direction: 'asc',
    limit: req.perPage,
    offset: (req.page - 1) * req.perPage,
  });
  const ids = rows.map((r) => r.id);
  const [environments, counts, running] = await Promise.all([
    presentEnvironments(scope, rows),
    deliveryReads.deploymentCounts(db, org.id, ids, since),
    deliveryReads.runningNow(
      db,
      org.id,
      rows.filter((r) => r.latest_snapshot > 0).map((r) => r.id),
      NAMED_RUNNING,
    ),
  ]);
  const more = req.page * req.perPage < total;
  const query = (page: number) => {
    const q = new URLSearchParams({ since: String(epochSeconds(since)), page: String(page) });
    q.set('per_page', String(req.perPage));
    return q;
  };
  return {
    since: epochSeconds(since),
    page: req.page,
    per_page: req.perPage,
    total_count: total,
    environments: rows.map((row, i) => {
      const now = running.get(row.id);
      return {
        environment: environments[i]!,
        running: now?.first ?? [],
        running_count: now?.count ?? 0,
        deployments: counts.get(row.id) ?? 0,
        deployments_url: apiUrl(
          scope,
          'deployments',
          new URLSearchParams({ environment: row.name, from: String(epochSeconds(since)) }),
        ),
      };
    }),
    next: more ? apiUrl(scope, 'environments-now', query(req.page + 1)) : null,
  };
}
