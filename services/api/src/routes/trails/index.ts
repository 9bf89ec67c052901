/** Trails (reference/cli-requests.md 3.2): begin, get, list; the audit package is in ../audit. */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OkString, OrgParams, QueryInt, errorResponses } from '../../../../shared/contract/common.js';
import {
  CreateTrail,
  CreateTrailForm,
  Trail,
  TrailListQuery,
  TrailPage,
} from '../../../../shared/contract/trails.js';
import { readMultipartForm } from '../../plugins/multipart.js';
import { trailsRepository } from '../../storage/repositories/trails.js';
import { inTransaction, type OrgScope } from '../../usecases/org-scope.js';
import { flowNotFound, resolveFlow, templateFromYaml } from '../../usecases/flows.js';
import { beginTrail, presentTrail, presentTrailItem, trailNotFound } from '../../usecases/trails.js';
import { flowsRepository } from '../../storage/repositories/flows.js';
import { pagination, paging } from '../paging.js';
import { FlowParams, TrailParams } from '../params.js';
import { orgScope, parseJsonBody, parseJsonPart } from '../request-context.js';
import { sendOk } from '../reply.js';

const tags = ['trails'];
const PageQuery = {
  page: QueryInt(1, 100_000).optional().default(1),
  per_page: QueryInt(1, 100).optional().default(20),
};

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  /** One page of the trails matching `filter`, presented. */
  const trailPage = async (
    scope: OrgScope,
    q: { page: number; per_page: number },
    filter: Parameters<typeof trailsRepository.list>[2],
  ) => {
    const { rows, total } = await trailsRepository.list(
      app.db,
      scope.org.id,
      filter,
      paging(q.page, q.per_page),
    );
    return {
      data: rows.map((r) => presentTrailItem(scope, r)),
      pagination: pagination(total, q.page, q.per_page),
    };
  };

  app.put(
    '/trails/:org/:flow',
    {
      config: { auth: { permission: 'evidence:write' } },
      schema: {
        operationId: 'beginTrail',
        summary: 'Begin a trail (201), or update it (200): multipart data_json + template_file, or JSON',
        tags,
        params: FlowParams,
        consumes: ['multipart/form-data', 'application/json'],
        body: z.union([CreateTrail, CreateTrailForm]).nullable().optional(),
        response: { 200: OkString, 201: OkString, ...errorResponses },
      },
    },
    async (request, reply) => {
      const scope = orgScope(app, request);
      let input: z.infer<typeof CreateTrail>;
      let template: { yaml: string; template: ReturnType<typeof templateFromYaml> } | null = null;
      if (request.isMultipart()) {
        const parts = await readMultipartForm(request, {
          allowed: ['data_json', 'template_file', 'template_file.0'],
          required: ['data_json'],
        });
        input = parseJsonPart(parts.get('data_json'), 'data_json', CreateTrail);
        const file = parts.get('template_file') ?? parts.get('template_file.0');
        if (file) {
          const yaml = file.data.toString('utf8');
          template = { yaml, template: templateFromYaml(yaml, file.name) };
        }
      } else {
        input = parseJsonBody(request.body, CreateTrail);
      }
      const { created } = await app.db.transaction().execute(async (trx) => {
        const trxScope = inTransaction(scope, trx);
        const flow = await resolveFlow(trxScope, request.params.flow);
        return beginTrail(trxScope, flow, input, template);
      });
      return sendOk(reply, created);
    },
  );

  app.get(
    '/trails/:org',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'listTrailsForOrg',
        summary: 'List trails, filtered by flow, fingerprint (or prefix) and flow tag',
        tags,
        params: OrgParams,
        querystring: TrailListQuery.extend(PageQuery),
        response: { 200: TrailPage, ...errorResponses },
      },
    },
    async (request) => {
      const scope = orgScope(app, request);
      const q = request.query;
      let flowId: string | undefined;
      if (q.flow !== undefined) {
        const flow = await flowsRepository.findByName(app.db, scope.org.id, q.flow);
        if (!flow) {
          throw flowNotFound(q.flow, scope.org.name);
        }
        flowId = flow.id;
      }
      const tag = q.flow_tag ? /^([^:=]+)[:=](.*)$/.exec(q.flow_tag) : null;
      return trailPage(scope, q, {
        flowId,
        fingerprintPrefix: q.fingerprint,
        flowTag: tag ? { key: tag[1]!, value: tag[2]! } : undefined,
      });
    },
  );

  app.get(
    '/trails/:org/:flow',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'listTrails',
        summary: 'List the trails of a flow, newest first',
        tags,
        params: FlowParams,
        querystring: z.strictObject(PageQuery),
        response: { 200: TrailPage, ...errorResponses },
      },
    },
    async (request) => {
      const scope = orgScope(app, request);
      const flow = await resolveFlow(scope, request.params.flow);
      const q = request.query;
      return trailPage(scope, q, { flowId: flow.id });
    },
  );

  app.get(
    '/trails/:org/:flow/:trail',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getTrail',
        summary: 'Get a trail: its compliance, template and event log',
        tags,
        params: TrailParams,
        response: { 200: Trail, ...errorResponses },
      },
    },
    async (request) => {
      const scope = orgScope(app, request);
      const flow = await resolveFlow(scope, request.params.flow);
      const trail = await trailsRepository.find(app.db, scope.org.id, flow.id, request.params.trail);
      if (!trail) {
        throw trailNotFound(request.params.trail, flow.name, scope.org.name);
      }
      return presentTrail(scope, flow, trail);
    },
  );
};

export default routes;
