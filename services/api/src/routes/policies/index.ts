/** Environment policies (reference/cli-requests.md 3.7; spec endpoint 14). */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  OkString,
  OrgName,
  OrgParams,
  ResourceName,
  errorResponses,
} from '../../../../shared/contract/common.js';
import { Policy, PolicyPayload } from '../../../../shared/contract/policies.js';
import { ValidationError, issuesToFieldErrors } from '../../errors.js';
import { readMultipartForm } from '../../plugins/multipart.js';
import { MAX_POLICY_BYTES } from '../../domain/policy.js';
import { listPolicies, putPolicy, readPolicy } from '../../usecases/runtime/policies.js';
import { sendOk } from '../reply.js';
import { orgScope } from '../request-context.js';

const tags = ['policies'];
const PolicyParams = z.strictObject({ org: OrgName, policy_name: ResourceName });

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.put(
    '/policies/:org',
    {
      config: { auth: { permission: 'policy:write' } },
      schema: {
        operationId: 'putPolicy',
        summary:
          'Create a policy, or add a version when its content changed (multipart: payload, policy_file)',
        tags,
        consumes: ['multipart/form-data'],
        params: OrgParams,
        description:
          'Multipart form with two parts: `payload`, JSON `{name, description, comment, type: "env"}`, and `policy_file`, the policy YAML (schema environment-policy v1).',
        response: { 200: OkString, 201: OkString, ...errorResponses },
      },
    },
    async (request, reply) => {
      const parts = await readMultipartForm(request, {
        allowed: ['payload', 'policy_file'],
        required: ['payload', 'policy_file'],
        maxFileBytes: MAX_POLICY_BYTES,
      });
      let json: unknown;
      try {
        json = JSON.parse(parts.get('payload')!.data.toString('utf8'));
      } catch (err) {
        throw new ValidationError({ payload: `not JSON: ${(err as Error).message}` });
      }
      const payload = PolicyPayload.safeParse(json);
      if (!payload.success) {
        throw new ValidationError(issuesToFieldErrors(payload.error.issues, 'payload'));
      }
      const yaml = parts.get('policy_file')!.data.toString('utf8');
      const result = await putPolicy(orgScope(app, request), {
        name: payload.data.name,
        description: payload.data.description,
        comment: payload.data.comment,
        yaml,
      });
      return sendOk(reply, result.created);
    },
  );

  app.get(
    '/policies/:org',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'listPolicies',
        summary: 'List policies',
        tags,
        params: OrgParams,
        response: { 200: z.array(Policy), ...errorResponses },
      },
    },
    async (request) => {
      return listPolicies(orgScope(app, request));
    },
  );

  app.get(
    '/policies/:org/:policy_name',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getPolicy',
        summary: 'Get a policy with its versions, events and consuming environments',
        tags,
        params: PolicyParams,
        response: { 200: Policy, ...errorResponses },
      },
    },
    async (request) => {
      return readPolicy(orgScope(app, request), request.params.policy_name);
    },
  );
};

export default routes;
