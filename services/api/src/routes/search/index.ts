/** Search and asserts (reference/cli-requests.md 3.3). */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OrgName, ResourceName, errorResponses } from '../../../../shared/contract/common.js';
import { AssertResult, NameSearchResult, SearchResult } from '../../../../shared/contract/search.js';
import { BadRequestError } from '../../errors.js';
import { assertWithPolicies } from '../../usecases/runtime/asserts.js';
import { assertInFlows, search, searchNames } from '../../usecases/evidence/search.js';
import { FingerprintParam, Repeated } from '../params.js';
import { orgScope } from '../request-context.js';

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
    async (request) => search(orgScope(app, request), request.params.sha),
  );

  app.get(
    '/search/:org/names',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'searchNames',
        summary: 'Find flows, trails, environments and artifacts whose name contains q (at most 20 of each)',
        tags: ['search'],
        params: z.strictObject({ org: OrgName }),
        querystring: z.strictObject({
          q: z
            .string()
            .trim()
            .min(2, 'give at least 2 characters of a name')
            .max(100, 'a name to search for is at most 100 characters'),
        }),
        response: { 200: NameSearchResult, ...errorResponses },
      },
    },
    async (request) => searchNames(orgScope(app, request), request.query.q),
  );

  app.get(
    '/asserts/:org/fingerprint/:fingerprint',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'assertArtifact',
        summary:
          'Is the artifact compliant? Flow scope (every flow holding it, or flow_name), environment scope (its attached policies and allowlist) or policy scope (the named policies)',
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
      const ctx = orgScope(app, request);
      if (q.environment_name !== undefined && q.policy_name.length > 0) {
        throw new BadRequestError('Assert in one scope: give environment_name or policy_name, not both', {
          'query.environment_name': 'not together with policy_name',
        });
      }
      if (q.environment_name !== undefined) {
        return assertWithPolicies(ctx, app.provenance, request.params.fingerprint, q.flow_name, {
          kind: 'environment',
          environment: q.environment_name,
        });
      }
      if (q.policy_name.length > 0) {
        return assertWithPolicies(ctx, app.provenance, request.params.fingerprint, q.flow_name, {
          kind: 'policy',
          policies: q.policy_name,
        });
      }
      return assertInFlows(ctx, request.params.fingerprint, q.flow_name);
    },
  );
};

export default routes;
