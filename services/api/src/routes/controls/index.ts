/** Controls, a beta feature (spec endpoint 13; reference/cli-requests.md 3.9). Admins write. */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  OrgName,
  OrgParams,
  QueryBool,
  QueryInt,
  errorResponses,
} from '../../../../shared/contract/common.js';
import {
  Control,
  ControlPage,
  ControlVersion,
  CreateControl,
  UpdateControl,
} from '../../../../shared/contract/controls.js';
import { requireOrg } from '../../plugins/auth.js';
import {
  assertControlsEnabled,
  createControl,
  getControl,
  listControls,
  presentControls,
  readControlVersion,
  setControlArchived,
  updateControl,
} from '../../usecases/evidence/controls.js';
import { transact } from '../../usecases/scope/org-scope.js';
import { sortedPage } from '../paging.js';
import { Repeated, tagFilters } from '../params.js';
import { orgScope } from '../request-context.js';
import { NoBody } from '../request-schemas.js';

const tags = ['controls'];
const ControlParams = z.strictObject({ org: OrgName, identifier: z.string().min(1).max(256) });

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  // Every control route, reads included, is refused while the beta is off.
  app.addHook('preHandler', async (request: FastifyRequest) => {
    if (request.org) {
      assertControlsEnabled(requireOrg(request));
    }
  });

  const current = async (request: FastifyRequest, identifier: string) => {
    const ctx = orgScope(app, request);
    const control = await getControl(ctx, identifier);
    const [presented] = await presentControls(ctx, [control]);
    return presented!;
  };

  app.post(
    '/controls/:org',
    {
      config: { auth: { permission: 'control:write' } },
      schema: {
        operationId: 'createControl',
        summary: 'Create a control (beta); a taken identifier is 409',
        tags,
        params: OrgParams,
        body: CreateControl,
        response: { 201: Control, ...errorResponses },
      },
    },
    async (request, reply) => {
      const ctx = orgScope(app, request);
      await transact(ctx, (s) => createControl(s, request.body));
      return reply.code(201).send(await current(request, request.body.identifier));
    },
  );

  app.get(
    '/controls/:org',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'listControls',
        summary: 'List controls (beta)',
        tags,
        params: OrgParams,
        querystring: z.strictObject({
          page: QueryInt(1, 100_000).optional().default(1),
          per_page: QueryInt(1, 100).optional().default(15),
          sort_direction: z.enum(['asc', 'desc']).optional().default('asc'),
          search: z.string().max(255).optional(),
          tag: Repeated,
          archived: QueryBool.optional().default(false),
        }),
        response: { 200: ControlPage, ...errorResponses },
      },
    },
    async (request) => {
      const q = request.query;
      return listControls(
        orgScope(app, request),
        { archived: q.archived, search: q.search, tags: tagFilters(q.tag) },
        sortedPage(q),
      );
    },
  );

  app.get(
    '/controls/:org/:identifier',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getControl',
        summary: 'Get a control (beta)',
        tags,
        params: ControlParams,
        response: { 200: Control, ...errorResponses },
      },
    },
    async (request) => current(request, request.params.identifier),
  );

  app.put(
    '/controls/:org/:identifier',
    {
      config: { auth: { permission: 'control:write' } },
      schema: {
        operationId: 'updateControl',
        summary: 'Update a control (beta): a new version when name, description or links change',
        tags,
        params: ControlParams,
        body: UpdateControl,
        response: { 200: Control, ...errorResponses },
      },
    },
    async (request) => {
      const ctx = orgScope(app, request);
      await transact(ctx, (s) => updateControl(s, request.params.identifier, request.body));
      return current(request, request.params.identifier);
    },
  );

  for (const action of ['archive', 'unarchive'] as const) {
    app.post(
      `/controls/:org/:identifier/${action}`,
      {
        config: { auth: { permission: 'control:write' } },
        schema: {
          operationId: `${action}Control`,
          summary: `${action === 'archive' ? 'Archive' : 'Unarchive'} a control (beta)`,
          tags,
          params: ControlParams,
          body: NoBody,
          response: { 200: Control, ...errorResponses },
        },
      },
      async (request) => {
        const ctx = orgScope(app, request);
        await transact(ctx, (s) => setControlArchived(s, request.params.identifier, action === 'archive'));
        return current(request, request.params.identifier);
      },
    );
  }

  // Spec endpoint 13.
  app.get(
    '/controls/:org/:identifier/versions/:version_number',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getControlVersion',
        summary: 'Get one version of a control (beta)',
        tags,
        params: ControlParams.extend({ version_number: QueryInt(1, 1_000_000) }),
        response: { 200: ControlVersion, ...errorResponses },
      },
    },
    async (request) => {
      const { identifier, version_number } = request.params;
      return readControlVersion(orgScope(app, request), identifier, version_number);
    },
  );
};

export default routes;
