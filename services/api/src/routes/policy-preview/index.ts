/**
 * Policy preview: what attaching or detaching policies would change in an environment, now and
 * at past snapshots. A read: it changes nothing.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { errorResponses } from '../../../../shared/contract/common.js';
import { PolicyPreview, PolicyPreviewInput } from '../../../../shared/contract/policy-preview.js';
import { previewPolicies } from '../../usecases/runtime/policy-preview.js';
import { EnvParams } from '../params.js';
import { orgScope } from '../request-context.js';

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/environments/:org/:env_name/policy-preview',
    {
      // A POST that changes nothing: not a write, so no audit entry.
      config: { auth: { permission: 'read' }, audit: false },
      schema: {
        operationId: 'previewEnvironmentPolicies',
        summary: "Which artifacts' compliance would change with policies attached or detached, per snapshot",
        tags: ['policies'],
        params: EnvParams,
        body: PolicyPreviewInput,
        response: { 200: PolicyPreview, ...errorResponses },
      },
    },
    async (request) => previewPolicies(orgScope(app, request), request.params.env_name, request.body),
  );
};

export default routes;
