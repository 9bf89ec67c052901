/** Allowlists (reference/cli-requests.md 3.3 `allow artifact`). */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OkString, OrgName, ResourceName, errorResponses } from '../../../../shared/contract/common.js';
import { AllowlistEntry, AllowlistPut } from '../../../../shared/contract/allowlists.js';
import { epochSeconds } from '../../ids.js';
import { requirePrincipal } from '../../plugins/auth.js';
import { allowlistsRepository } from '../../storage/repositories/allowlists.js';
import { allowArtifact } from '../../usecases/environments.js';
import { sendJsonString, orgRef } from '../schemas.js';

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
        params: z.strictObject({ org: OrgName, env_name: ResourceName }),
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
      return sendJsonString(reply, 'OK', created ? 201 : 200);
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
        params: z.strictObject({ org: OrgName }),
        response: { 200: z.array(AllowlistEntry), ...errorResponses },
      },
    },
    async (request) =>
      (await allowlistsRepository.list(app.db, orgRef(request).id)).map((r) => ({
        artifact_name: r.artifact_name,
        fingerprint: r.fingerprint,
        environment_name: r.environment_name,
        timestamp: epochSeconds(r.created_at),
        user_name: r.created_by,
        description: r.description,
      })),
  );
};

export default routes;
