/** Snapshots: one by expression, the list, and env-diff (reference/cli-requests.md 3.5, 3.6). */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OrgParams, errorResponses } from '../../../../shared/contract/common.js';
import {
  EnvironmentDiff,
  Snapshot,
  SnapshotListItem,
  SnapshotListQuery,
} from '../../../../shared/contract/snapshots.js';
import { orgScope } from '../request-context.js';
import { diffSnapshots, listSnapshots, readSnapshot } from '../../usecases/runtime/snapshots.js';
import { EnvParams } from '../params.js';

const tags = ['snapshots'];

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/snapshots/:org/:env_name',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'listSnapshots',
        summary: 'List the snapshots of an environment, newest first (interval a..b, pages)',
        tags,
        params: EnvParams,
        querystring: SnapshotListQuery,
        response: { 200: z.array(SnapshotListItem), ...errorResponses },
      },
    },
    async (request) => listSnapshots(orgScope(app, request), request.params.env_name, request.query),
  );

  app.get(
    '/snapshots/:org/:env_name/:snapshot_expression',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getSnapshot',
        summary: 'Get a snapshot: N, #N, -N (-1 latest), ~N, @{YYYY-MM-DDTHH:MM:SS} or @{N.unit.ago}',
        tags,
        params: EnvParams.extend({ snapshot_expression: z.string().min(1).max(100) }),
        response: { 200: Snapshot, ...errorResponses },
      },
      // A snapshot of thousands of pods is built by our own code in the documented shape;
      // re-validating megabytes of it on the way out would cost more than the read itself.
      serializerCompiler: () => (data) => JSON.stringify(data),
    },
    async (request) =>
      readSnapshot(orgScope(app, request), request.params.env_name, request.params.snapshot_expression),
  );

  app.get(
    '/env-diff/:org',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'diffSnapshots',
        summary: 'Compare two snapshots (snappish: env, env#N, env~N, env@{...})',
        tags,
        params: OrgParams,
        querystring: z.strictObject({
          snappish1: z.string().min(1).max(300),
          snappish2: z.string().min(1).max(300),
        }),
        response: { 200: EnvironmentDiff, ...errorResponses },
      },
    },
    async (request) =>
      diffSnapshots(orgScope(app, request), request.query.snappish1, request.query.snappish2),
  );
};

export default routes;
