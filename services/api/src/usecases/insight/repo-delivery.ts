/**
 * A repository's delivery (`GET /repos/{org}/{repo}/delivery`), what the reference app's Build,
 * Release and Run tabs show: its builds over time, its deployments and their change lead time per
 * environment, and what runs now in each environment, by commit.
 */
import type { z } from 'zod';
import { MAX_RUNNING, type RepoDelivery } from '../../../../shared/contract/insight.js';
import { commitOf } from '../../domain/deployments.js';
import { NotFoundError } from '../../errors.js';
import { epochSeconds } from '../../time.js';
import { deliveryReads, type Bucket } from '../../storage/repositories/delivery-reads.js';
import { environmentsRepository } from '../../storage/repositories/environments.js';
import { reposRepository } from '../../storage/repositories/repos.js';
import { groupBy } from '../../group-by.js';
import { apiUrl, artifactUrls } from '../scope/links.js';
import type { OrgScope } from '../scope/org-scope.js';
import { checkRange, deploymentsQuery } from './deployments.js';
import { bucketsOf, DEFAULT_RANGE_DAYS } from './dora.js';

export async function repoDelivery(
  scope: OrgScope,
  req: { repo: string; from?: Date | undefined; to?: Date | undefined; bucket: Bucket },
): Promise<z.infer<typeof RepoDelivery>> {
  const { db, org } = scope;
  checkRange(req.from, req.to);
  const to = req.to ?? scope.now;
  const from = req.from ?? new Date(to.getTime() - DEFAULT_RANGE_DAYS * 86_400_000);
  const buckets = bucketsOf(from, to, req.bucket);
  const repos = await reposRepository.findByName(db, org.id, req.repo);
  if (repos.length === 0) {
    throw new NotFoundError(`Repo '${req.repo}' not found`);
  }
  const repoIds = repos.map((r) => r.id);
  const [builds, perEnv, running, runningCounts] = await Promise.all([
    deliveryReads.builds(db, org.id, repoIds, { from, to }, req.bucket),
    deliveryReads.perEnvironment(db, org.id, req.repo, { from, to }),
    deliveryReads.runningFrom(db, org.id, repoIds, MAX_RUNNING),
    // how many run in each environment, so an answer cut at MAX_RUNNING says so
    deliveryReads.runningCounts(db, org.id, repoIds),
  ]);
  const envIds = [
    ...new Set([...perEnv.map((e) => e.environment_id), ...runningCounts.map((r) => r.environment_id)]),
  ];
  const envs = new Map((await environmentsRepository.findByIds(db, org.id, envIds)).map((e) => [e.id, e]));
  const built = new Map(builds.map((b) => [b.bucket.getTime(), b.builds]));
  const stats = new Map(perEnv.map((e) => [e.environment_id, e]));
  const runningByEnv = groupBy(running, (r) => r.environment_id);
  const runningCount = new Map(runningCounts.map((c) => [c.environment_id, c.running]));
  const environments = envIds
    .flatMap((id) => {
      const env = envs.get(id);
      return env ? [{ id, name: env.name }] : [];
    })
    .sort((a, b) => a.name.localeCompare(b.name))
    .map(({ id, name }) => {
      const s = stats.get(id);
      return {
        environment: name,
        deployments: s?.deployments ?? 0,
        lead_time_for_changes: { p50: s?.lead_p50 ?? null, p90: s?.lead_p90 ?? null },
        deployments_url: apiUrl(
          scope,
          'deployments',
          deploymentsQuery({ environment: name, repo: req.repo, from, to }),
        ),
        running_count: runningCount.get(id) ?? 0,
        running: (runningByEnv.get(id) ?? []).map((r) => ({
          name: r.name,
          fingerprint: r.fingerprint,
          flow: r.flow_name,
          trail: r.trail_name,
          git_commit: r.git_commit,
          commit_timestamp: commitOf(r.git_commit_info)?.timestamp ?? null,
          html_url: artifactUrls(scope, { flow: r.flow_name, fingerprint: r.fingerprint, id: r.artifact_id })
            .html_url,
        })),
      };
    });
  return {
    repo: req.repo,
    from: epochSeconds(from),
    to: epochSeconds(to),
    builds: buckets.map((b) => ({ from: epochSeconds(b.from), builds: built.get(b.start.getTime()) ?? 0 })),
    environments,
  };
}
