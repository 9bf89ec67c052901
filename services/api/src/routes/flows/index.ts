/** Flows (reference/cli-requests.md 3.1; spec endpoints 10 and 11; the flow listing). */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  OkString,
  OrgParams,
  QueryBool,
  QueryInt,
  errorResponses,
} from '../../../../shared/contract/common.js';
import {
  CreateFlowData,
  Flow,
  FlowPage,
  FlowTemplateForm,
  LegacyCreateFlow,
  RenameInput,
} from '../../../../shared/contract/flows.js';
import { readMultipartForm } from '../../plugins/multipart.js';
import { transact } from '../../usecases/scope/org-scope.js';
import {
  archiveFlow,
  listFlows,
  readFlow,
  renameFlow,
  templateFromYaml,
  upsertFlow,
} from '../../usecases/evidence/flows.js';
import { FlowParams, Repeated, tagFilters } from '../params.js';
import { pagination, paging } from '../paging.js';
import { orgScope, parseJsonPart } from '../request-context.js';
import { sendOk } from '../reply.js';
import { NoBody } from '../request-schemas.js';

const tags = ['flows'];

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/flows/:org',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'listFlows',
        summary: 'List flows: a plain array, or a page when per_page is given',
        tags,
        params: OrgParams,
        querystring: z.strictObject({
          sort: z.enum(['name', 'latest_activity']).optional().default('name'),
          sort_direction: z.enum(['asc', 'desc']).optional(),
          page: QueryInt(1, 100_000).optional(),
          per_page: QueryInt(1, 100).optional(),
          search_by_name: z.string().max(255).optional(),
          case_sensitive: QueryBool.optional(),
          tag: Repeated,
          space_id: Repeated,
        }),
        response: { 200: z.union([z.array(Flow), FlowPage]), ...errorResponses },
      },
    },
    async (request) => {
      const scope = orgScope(app, request);
      const q = request.query;
      const direction = q.sort_direction ?? (q.sort === 'latest_activity' ? 'desc' : 'asc');
      const filter = {
        search: q.search_by_name,
        caseSensitive: q.case_sensitive ?? true,
        tags: tagFilters(q.tag),
        sort: q.sort,
        direction,
      };
      if (q.per_page === undefined && q.page === undefined) {
        return (await listFlows(scope, filter)).flows;
      }
      const page = q.page ?? 1;
      const perPage = q.per_page ?? 20;
      const { flows, total } = await listFlows(scope, filter, paging(page, perPage));
      return { data: flows, pagination: pagination(total, page, perPage) };
    },
  );

  app.put(
    '/flows/:org',
    {
      config: { auth: { permission: 'flow:write' } },
      schema: {
        operationId: 'putFlowLegacy',
        summary: 'Create or update a flow with a legacy list of expected evidence (deprecated)',
        tags,
        params: OrgParams,
        body: LegacyCreateFlow,
        response: { 200: OkString, 201: OkString, ...errorResponses },
      },
    },
    async (request, reply) => {
      const scope = orgScope(app, request);
      const b = request.body;
      const { created } = await transact(scope, (s) =>
        upsertFlow(s, {
          name: b.name,
          description: b.description,
          visibility: b.visibility,
          yaml: null,
          template: null,
          legacy: b.template ?? ['artifact'],
        }),
      );
      return sendOk(reply, created);
    },
  );

  // Spec endpoint 11.
  app.put(
    '/flows/:org/template_file',
    {
      config: { auth: { permission: 'flow:write' } },
      schema: {
        operationId: 'putFlowWithTemplate',
        summary: 'Create or update a flow with a template (multipart: data_json, template_file)',
        tags,
        params: OrgParams,
        consumes: ['multipart/form-data'],
        body: FlowTemplateForm.nullable().optional(),
        response: { 200: OkString, 201: OkString, ...errorResponses },
      },
    },
    async (request, reply) => {
      const scope = orgScope(app, request);
      const parts = await readMultipartForm(request, {
        allowed: ['data_json', 'template_file', 'template_file.0'],
        required: ['data_json'],
      });
      const data = parseJsonPart(parts.get('data_json'), 'data_json', CreateFlowData);
      const file = parts.get('template_file') ?? parts.get('template_file.0');
      const yaml = file ? file.data.toString('utf8') : null;
      const template = yaml !== null ? templateFromYaml(yaml, file!.name) : null;
      const { created } = await transact(scope, (s) =>
        upsertFlow(s, {
          name: data.name,
          description: data.description,
          visibility: data.visibility,
          yaml,
          template,
          legacy: null,
        }),
      );
      return sendOk(reply, created);
    },
  );

  app.get(
    '/flows/:org/:flow',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getFlow',
        summary: 'Get a flow (also by the old name of a renamed flow)',
        tags,
        params: FlowParams,
        response: { 200: Flow, ...errorResponses },
      },
    },
    async (request) => {
      return readFlow(orgScope(app, request), request.params.flow);
    },
  );

  // Spec endpoint 10.
  app.put(
    '/flows/:org/:flow/rename',
    {
      config: { auth: { permission: 'flow:write' } },
      schema: {
        operationId: 'renameFlow',
        summary: 'Rename a flow; the old name answers until another flow takes it',
        tags,
        params: FlowParams,
        body: RenameInput,
        response: { 200: OkString, ...errorResponses },
      },
    },
    async (request, reply) => {
      const scope = orgScope(app, request);
      await transact(scope, (s) => renameFlow(s, request.params.flow, request.body.new_name));
      return sendOk(reply);
    },
  );

  app.put(
    '/flows/:org/:flow/archive',
    {
      config: { auth: { permission: 'flow:write' } },
      schema: {
        operationId: 'archiveFlow',
        summary: 'Archive a flow',
        tags,
        params: FlowParams,
        body: NoBody,
        response: { 200: OkString, ...errorResponses },
      },
    },
    async (request, reply) => {
      await archiveFlow(orgScope(app, request), request.params.flow);
      return sendOk(reply);
    },
  );
};

export default routes;
