/** Search and asserts (reference/cli-requests.md 3.3). */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OrgName, ResourceName, errorResponses } from '../../../../shared/contract/common.js';
import { AssertResult, SearchResult } from '../../../../shared/contract/search.js';
import { BadRequestError } from '../../errors.js';
import { assertInFlows, search } from '../../usecases/search.js';
import { evidenceContext, FingerprintParam, Repeated } from '../evidence-shared.js';

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/search/:org/sha/:sha',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'search',
        summary: 'Find artifacts by fingerprint or commit (full or a 5+ hex prefix)',
        tags: ['search'],
        params: z.strictObject({
          org: OrgName,
          sha: z
            .string()
            .regex(/^[a-f0-9]{5,64}$/, 'must be 5 to 64 lowercase hex characters (a fingerprint or commit)'),
        }),
        response: { 200: SearchResult, ...errorResponses },
      },
    },
    async (request) => search(evidenceContext(app, request), request.params.sha),
  );

  app.get(
    '/asserts/:org/fingerprint/:fingerprint',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'assertArtifact',
        summary: 'Is the artifact compliant? Flow scope (every flow holding it, or flow_name)',
        tags: ['asserts'],
        params: z.strictObject({ org: OrgName, fingerprint: FingerprintParam }),
        querystring: z.strictObject({
          flow_name: ResourceName.optional(),
          environment_name: z.string().max(255).optional(),
          policy_name: Repeated,
        }),
        response: { 200: AssertResult, ...errorResponses },
      },
    },
    async (request) => {
      const q = request.query;
      // The environment and policy scopes come with environments and policies.
      if (q.environment_name !== undefined) {
        throw new BadRequestError(
          'The environment scope of assert is not yet supported: leave out environment_name',
          {
            'query.environment_name': 'not yet supported',
          },
        );
      }
      if (q.policy_name.length > 0) {
        throw new BadRequestError('The policy scope of assert is not yet supported: leave out policy_name', {
          'query.policy_name': 'not yet supported',
        });
      }
      return assertInFlows(evidenceContext(app, request), request.params.fingerprint, q.flow_name);
    },
  );
};

export default routes;
