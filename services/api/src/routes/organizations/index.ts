/** The organization, its beta switch, and the caller's default organization. */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { OkString, OrgParams, errorResponses } from '../../../../shared/contract/common.js';
import {
  DefaultOrg,
  ExperimentalFeaturesInput,
  Organization,
} from '../../../../shared/contract/organizations.js';
import { requireOrg, requirePrincipal } from '../../plugins/auth.js';
import { NotFoundError } from '../../errors.js';
import { epochSeconds } from '../../ids.js';
import { orgsRepository } from '../../storage/repositories/orgs.js';
import { usersRepository } from '../../storage/repositories/users.js';
import { NoBody, sendJsonString } from '../schemas.js';

const tags = ['organizations'];

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/organizations/:org',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getOrganization',
        summary: 'Get an organization',
        tags,
        params: OrgParams,
        response: { 200: Organization, ...errorResponses },
      },
    },
    async (request) => {
      const row = await orgsRepository.findById(app.db, requireOrg(request).id);
      if (!row) throw new NotFoundError(`Organization '${request.params.org}' does not exist`);
      return {
        name: row.name,
        display_name: row.display_name,
        experimental_features_enabled: row.experimental_features_enabled,
        created_at: epochSeconds(row.created_at),
      };
    },
  );

  app.put(
    '/organizations/:org/experimental_features',
    {
      config: { auth: { permission: 'org:admin' } },
      schema: {
        operationId: 'setExperimentalFeatures',
        summary: 'Turn beta features (controls) on or off for the organization',
        tags,
        params: OrgParams,
        body: ExperimentalFeaturesInput,
        response: { 200: OkString, ...errorResponses },
      },
    },
    async (request, reply) => {
      await orgsRepository.setExperimentalFeatures(
        app.db,
        requireOrg(request).id,
        request.body.experimental_features_enabled,
      );
      app.caches.keys.clear();
      return sendJsonString(reply, 'OK');
    },
  );

  app.get(
    '/user/default-org',
    {
      config: { auth: { permission: 'authenticated' } },
      schema: {
        operationId: 'getDefaultOrg',
        summary: "The caller's default organization",
        tags,
        response: { 200: DefaultOrg, ...errorResponses },
      },
    },
    async (request) => {
      const principal = requirePrincipal(request);
      if (principal.kind === 'service_account') return { default_org_name: principal.homeOrg?.name ?? null };
      const user = await usersRepository.findById(app.db, principal.id);
      const org = user?.default_org_id
        ? await orgsRepository.findById(app.db, user.default_org_id)
        : undefined;
      return { default_org_name: org?.name ?? null };
    },
  );

  app.put(
    '/user/:org',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'setDefaultOrg',
        summary: "Set the caller's default organization",
        tags,
        params: OrgParams,
        body: NoBody,
        response: { 200: OkString, ...errorResponses },
      },
    },
    async (request, reply) => {
      const principal = requirePrincipal(request);
      // A service account has one organization, which is already its default.
      if (principal.kind === 'user')
        await usersRepository.setDefaultOrg(app.db, principal.id, requireOrg(request).id);
      return sendJsonString(reply, 'OK');
    },
  );
};

export default routes;
