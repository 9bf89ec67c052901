/**
 * Deployments as the interface lists them (`GET /deployments/{org}`): newest first, in pages
 * that start where the previous one ended (keyset on start time and id), so a page costs the
 * same however deep it is and rows written meanwhile never shift it.
 */
import type { z } from 'zod';
import { cappedCount, COUNT_CAP } from '../../../../shared/contract/common.js';
import type { Deployment, DeploymentPage } from '../../../../shared/contract/insight.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { epochSeconds } from '../../time.js';
import {
  deliveryReads,
  type DeploymentCursor,
  type DeploymentRow,
} from '../../storage/repositories/delivery-reads.js';
import { environmentsRepository } from '../../storage/repositories/environments.js';
import { apiUrl } from '../scope/links.js';
import type { OrgScope } from '../scope/org-scope.js';

export interface DeploymentsRequest {
  environment?: string | undefined;
  flow?: string | undefined;
  repo?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  failedWithin?: number | undefined;
  page?: string | undefined;
  perPage: number;
}

/** The environment of a filter, by name; 404 naming it when the organization has none. */
export async function environmentIdOf(
  scope: OrgScope,
  name: string | undefined,
): Promise<string | undefined> {
  if (name === undefined) {
    return undefined;
  }
  const env = await environmentsRepository.findByName(scope.db, scope.org.id, name);
  if (!env) {
    throw new NotFoundError(
      `Environment named '${name}' does not exist for organization '${scope.org.name}'`,
    );
  }
  return env.id;
}

/** Refuses a range whose start is after its end. */
export function checkRange(from: Date | undefined, to: Date | undefined): void {
  if (from && to && from.getTime() > to.getTime()) {
    throw new BadRequestError('`from` is after `to`', { 'query.from': 'must not be after `to`' });
  }
}

const encodeCursor = (c: DeploymentCursor): string =>
  Buffer.from(JSON.stringify([c.startedAt.getTime(), c.id])).toString('base64url');

function decodeCursor(text: string): DeploymentCursor {
  try {
    const v: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (
      Array.isArray(v) &&
      v.length === 2 &&
      Number.isSafeInteger(v[0]) &&
      typeof v[1] === 'string' &&
      v[1].length <= 64
    ) {
      return { startedAt: new Date(v[0] as number), id: v[1] };
    }
  } catch {
    // Reported below.
  }
  throw new BadRequestError('`page` is not a page of this list: use the `next` link of the previous page', {
    'query.page': 'not a page of this list',
  });
}

/** One deployment as the interface shows it. */
export function presentDeployment(
  r: DeploymentRow & { environment_name: string },
): z.infer<typeof Deployment> {
  return {
    environment: r.environment_name,
    snapshot_index: r.snapshot_index,
    started_at: epochSeconds(r.started_at),
    artifact: {
      name: r.artifact_name,
      fingerprint: r.fingerprint,
      flow: r.flow_name,
      trail: r.trail_name,
      git_commit: r.git_commit,
      html_url: r.html_url,
    },
    replaced: r.replaced,
    rollback: r.rollback,
    commit_lead_time: r.commit_lead_time,
    build_lead_time: r.build_lead_time,
    change_lead_time: r.change_lead_time,
    commits: r.commits,
    compliant: r.compliant,
  };
}

/** The query of a deployments link with these filters (and the page, when given). */
export function deploymentsQuery(
  q: Omit<DeploymentsRequest, 'perPage'> & { perPage?: number },
): URLSearchParams {
  const p = new URLSearchParams();
  const add = (k: string, v: string | number | undefined) => {
    if (v !== undefined) {
      p.set(k, String(v));
    }
  };
  add('environment', q.environment);
  add('flow', q.flow);
  add('repo', q.repo);
  add('from', q.from ? epochSeconds(q.from) : undefined);
  add('to', q.to ? epochSeconds(q.to) : undefined);
  add('failed_within', q.failedWithin);
  add('per_page', q.perPage);
  add('page', q.page);
  return p;
}

/** `GET /deployments/{org}`. */
export async function listDeployments(
  scope: OrgScope,
  req: DeploymentsRequest,
): Promise<z.infer<typeof DeploymentPage>> {
  checkRange(req.from, req.to);
  const cursor = req.page === undefined ? null : decodeCursor(req.page);
  const environmentId = await environmentIdOf(scope, req.environment);
  const filter = {
    environmentId,
    repo: req.repo,
    flow: req.flow,
    from: req.from,
    to: req.to,
    failedWithin: req.failedWithin,
  };
  const [rows, total, before] = await Promise.all([
    deliveryReads.page(scope.db, scope.org.id, filter, cursor, req.perPage + 1),
    deliveryReads.count(scope.db, scope.org.id, filter, COUNT_CAP),
    cursor ? deliveryReads.count(scope.db, scope.org.id, filter, COUNT_CAP, cursor) : Promise.resolve(0),
  ]);
  const shown = rows.slice(0, req.perPage);
  const last = shown[shown.length - 1];
  const next =
    rows.length > req.perPage && last
      ? apiUrl(
          scope,
          'deployments',
          deploymentsQuery({ ...req, page: encodeCursor({ startedAt: last.started_at, id: last.id }) }),
        )
      : null;
  return {
    deployments: shown.map(presentDeployment),
    next,
    ...cappedCount(total),
    offset: before > COUNT_CAP ? null : before,
  };
}
