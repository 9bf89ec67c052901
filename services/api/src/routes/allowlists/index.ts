/** Allowlists (reference/cli-requests.md 3.3 `allow artifact`). */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OkString, OrgParams, errorResponses } from '../../../../shared/contract/common.js';
import { AllowlistEntry, AllowlistPut } from '../../../../shared/contract/allowlists.js';
import { allowArtifact, listAllowlist } from '../../usecases/runtime/allowlists.js';
import { EnvParams } from '../params.js';
import { sendOk } from '../reply.js';
import { orgScope } from '../request-context.js';

const tags = ['allowlists'];

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.put(
    '/allowlists/:org/:env_name',
    {
      config: { auth: { permission: 'environment:write' } },
      schema: {
        operationId: 'allowArtifact',
        summary: 'Allow-list a fingerprint in an environment: it counts as compliant there',
        tags,
        params: EnvParams,
        body: AllowlistPut,
        response: { 200: OkString, 201: OkString, ...errorResponses },
      },
    },
    async (request, reply) => {
      const created = await allowArtifact(orgScope(app, request), request.params.env_name, {
        fingerprint: request.body.artifact_fingerprint,
        artifactName: request.body.artifact_name,
        description: request.body.description,
      });
      return sendOk(reply, created);
    },
  );

  app.get(
    '/allowlists/:org',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'listAllowlist',
        summary: 'List allow-listed fingerprints of every environment',
        tags,
        params: OrgParams,
        response: { 200: z.array(AllowlistEntry), ...errorResponses },
      },
    },
    async (request) => listAllowlist(orgScope(app, request)),
  );
};

export default routes;
