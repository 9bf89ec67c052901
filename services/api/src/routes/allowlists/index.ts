/** Allowlists (reference/cli-requests.md 3.3 `allow artifact`). */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OkString, OrgParams, errorResponses } from '../../../../shared/contract/common.js';
import { AllowlistEntry, AllowlistPut } from '../../../../shared/contract/allowlists.js';
import { requirePrincipal, orgRef } from '../../plugins/auth.js';
import { listAllowlist } from '../../usecases/runtime/allowlists.js';
import { allowArtifact } from '../../usecases/runtime/environments.js';
import { EnvParams } from '../params.js';
import { sendOk } from '../reply.js';

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
      const { created, outcome, notifications } = await allowArtifact(
        app.db,
        app.runtime.deps,
        orgRef(request),
        request.params.env_name,
        {
          fingerprint: request.body.artifact_fingerprint,
          artifactName: request.body.artifact_name,
          description: request.body.description,
        },
        requirePrincipal(request).name,
        app.clock(),
      );
      app.runtime.committed([outcome, { snapshot: null, notifications }]);
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
    async (request) => listAllowlist(app.db, orgRef(request)),
  );
};

export default routes;
