/** The organization, its beta switch, and the caller's default organization. */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { OkString, OrgParams, errorResponses } from '../../../../shared/contract/common.js';
import {
  DefaultOrg,
  ExperimentalFeaturesInput,
  Organization,
} from '../../../../shared/contract/organizations.js';
import { requirePrincipal } from '../../plugins/auth.js';
import {
  defaultOrgName,
  readOrganization,
  setDefaultOrg,
  setExperimentalFeatures,
} from '../../usecases/access/organizations.js';
import { sendOk } from '../reply.js';
import { orgScope } from '../request-context.js';
import { NoBody } from '../request-schemas.js';

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
      return readOrganization(orgScope(app, request));
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
      await setExperimentalFeatures(orgScope(app, request), request.body.experimental_features_enabled);
      app.caches.keys.clear();
      return sendOk(reply);
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
      return { default_org_name: await defaultOrgName(app.db, requirePrincipal(request)) };
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
      await setDefaultOrg(orgScope(app, request), requirePrincipal(request));
      return sendOk(reply);
    },
  );
};

export default routes;
