/** Delivery insight: deployments, the four DORA keys, and a repository's delivery. */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OrgName, OrgParams, errorResponses } from '../../../../shared/contract/common.js';
import {
  DeploymentPage,
  DeploymentsQuery,
  DoraAnswer,
  DoraQuery,
  EnvironmentsNowPage,
  EnvironmentsNowQuery,
  RepoDelivery,
  RepoDeliveryQuery,
} from '../../../../shared/contract/insight.js';
import { listDeployments } from '../../usecases/insight/deployments.js';
import { doraFigures } from '../../usecases/insight/dora.js';
import { repoDelivery } from '../../usecases/insight/repo-delivery.js';
import { environmentsNow } from '../../usecases/runtime/environments-now.js';
import { orgScope } from '../request-context.js';

const tags = ['insight'];

const DORA_DESCRIPTION = `The four keys, per bucket (UTC days, or ISO weeks from Monday) and for the whole range, from what actually ran:
- **Deployment frequency**: deployments that started in the stretch, and their number per day. A deployment is a fingerprint starting to run in an environment where it never ran, or a rollback (a fingerprint that ran there before coming back in place of another). Scaling, restarts and a fingerprint scaled to zero and back are not deployments.
- **Lead time for changes**: p50 and p90 of the deployments' change lead time, the seconds from the oldest commit a deployment brought to its start. The commits a deployment brought are those of its flow's artifacts built after the artifact it replaced, up to and including its own (or its own commit, and its commits list, for a first deployment). Rollbacks bring no change and are left out.
- **Change failure rate**: failures / deployments, where a deployment failed when, within \`failure_window\` seconds of starting (24 h by default), it was rolled back or the environment became non-compliant because of the deployed artifact (it started non-compliant, or became non-compliant while running). Null when there were no deployments.
- **Time to restore**: p50 and p90 of the seconds from an environment becoming non-compliant to becoming compliant again, for restores that happened in the stretch. It is environment-wide: \`repo\` does not narrow it.
Each figure links to the deployments it counts (\`deployments_url\`, \`failures_url\`).`;

const RepoDeliveryParams = z.strictObject({ org: OrgName, repo: z.string().min(1).max(512) });

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/deployments/:org',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'listDeployments',
        summary:
          'Deployments, newest first: what started running where, what it replaced, its commits and lead times',
        description:
          "A deployment is a new fingerprint starting to run in an environment; a fingerprint that ran there before and comes back in place of another is a rollback. `commit_lead_time` is from the artifact's own commit to the start, `build_lead_time` from the artifact's creation, `change_lead_time` from the oldest commit the deployment brought. `compliant` is the artifact's compliance when it landed. Pages follow the `next` link.",
        tags,
        params: OrgParams,
        querystring: DeploymentsQuery,
        response: { 200: DeploymentPage, ...errorResponses },
      },
    },
    async (request) => {
      const q = request.query;
      return listDeployments(orgScope(app, request), {
        environment: q.environment,
        flow: q.flow,
        repo: q.repo,
        from: q.from,
        to: q.to,
        failedWithin: q.failed_within,
        page: q.page,
        perPage: q.per_page,
      });
    },
  );

  app.get(
    '/dora/:org',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'doraFigures',
        summary: 'The four DORA keys per bucket and for the whole range',
        description: DORA_DESCRIPTION,
        tags,
        params: OrgParams,
        querystring: DoraQuery,
        response: { 200: DoraAnswer, ...errorResponses },
      },
    },
    async (request) => {
      const q = request.query;
      return doraFigures(orgScope(app, request), {
        environment: q.environment,
        repo: q.repo,
        from: q.from,
        to: q.to,
        bucket: q.bucket,
        failureWindow: q.failure_window,
      });
    },
  );

  app.get(
    '/environments-now/:org',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'environmentsNow',
        summary:
          'A page of environments by name, each with what runs in it now and its deployments since a time',
        description:
          "What an organization's home page shows of each environment, in one request: the environment (as the environments list shows it), the first artifacts running in it now by name with their compliance and how many run, and how many deployments started there since `since` (a week ago by default), with the link to them. Archived environments are left out. `total_count` says how many environments there are; `next` links to the next page.",
        tags,
        params: OrgParams,
        querystring: EnvironmentsNowQuery,
        response: { 200: EnvironmentsNowPage, ...errorResponses },
      },
    },
    async (request) => {
      const q = request.query;
      return environmentsNow(orgScope(app, request), { since: q.since, page: q.page, perPage: q.per_page });
    },
  );

  // Repository names hold slashes: the name is one escaped segment (`acme%2Fshop`), or up to three plain ones.
  const deliveryPaths = [
    '/repos/:org/:repo/delivery',
    '/repos/:org/:owner/:name/delivery',
    '/repos/:org/:group/:owner/:name/delivery',
  ];
  for (const [i, path] of deliveryPaths.entries()) {
    app.get(
      path,
      {
        config: { auth: { permission: 'read' } },
        schema: {
          operationId: i === 0 ? 'repoDelivery' : `repoDelivery${i + 1}`,
          summary:
            "A repository's builds over time, deployments and lead time per environment, and what runs now",
          tags,
          params:
            i === 0
              ? RepoDeliveryParams
              : z.strictObject({
                  org: OrgName,
                  ...(i === 2 ? { group: z.string().min(1).max(256) } : {}),
                  owner: z.string().min(1).max(256),
                  name: z.string().min(1).max(256),
                }),
          querystring: RepoDeliveryQuery,
          response: { 200: RepoDelivery, ...errorResponses },
        },
      },
      async (request) => {
        const p = request.params as Record<string, string>;
        const repo = p.repo ?? [p.group, p.owner, p.name].filter((s) => s !== undefined).join('/');
        const q = request.query;
        return repoDelivery(orgScope(app, request), { repo, from: q.from, to: q.to, bucket: q.bucket });
      },
    );
  }
};

export default routes;
