/** Trails (reference/cli-requests.md 3.2): begin, get, list; the audit package is in ../audit. */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OkString, OrgParams, QueryInt, errorResponses } from '../../../../shared/contract/common.js';
import {
  CreateTrail,
  CreateTrailForm,
  Trail,
  TrailEventsPage,
  TrailListQuery,
  TrailPage,
} from '../../../../shared/contract/trails.js';
import { readMultipartForm } from '../../plugins/multipart.js';
import { transact } from '../../usecases/scope/org-scope.js';
import { resolveFlow, templateFromYaml } from '../../usecases/evidence/flows.js';
import {
  beginTrail,
  listFlowTrails,
  listTrails,
  readTrail,
  trailEventsPage,
} from '../../usecases/evidence/trails.js';
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

  /** A page of trails as the listing routes answer it. */
  const trailPage = <T>(found: { trails: T[]; total: number }, q: { page: number; per_page: number }) => ({
    data: found.trails,
    pagination: pagination(found.total, q.page, q.per_page),
  });

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
      const { created } = await transact(scope, async (s) =>
        beginTrail(s, await resolveFlow(s, request.params.flow), input, template),
      );
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
      const q = request.query;
      const tag = q.flow_tag ? /^([^:=]+)[:=](.*)$/.exec(q.flow_tag) : null;
      const filter = {
        flowName: q.flow,
        fingerprintPrefix: q.fingerprint,
        flowTag: tag ? { key: tag[1]!, value: tag[2]! } : undefined,
      };
      return trailPage(await listTrails(orgScope(app, request), filter, paging(q.page, q.per_page)), q);
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
      const q = request.query;
      const page = paging(q.page, q.per_page);
      return trailPage(await listFlowTrails(orgScope(app, request), request.params.flow, page), q);
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
      return readTrail(orgScope(app, request), request.params.flow, request.params.trail);
    },
  );

  app.get(
    '/trails/:org/:flow/:trail/events',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getTrailEvents',
        summary:
          "A page of a trail's whole event log, oldest first (its answer carries the first and latest events)",
        tags,
        params: TrailParams,
        querystring: z.strictObject({
          page: QueryInt(1, 100_000).optional().default(1),
          per_page: QueryInt(1, 1000).optional().default(100),
        }),
        response: { 200: TrailEventsPage, ...errorResponses },
      },
    },
    async (request) => {
      const q = request.query;
      const { flow, trail } = request.params;
      const page = await trailEventsPage(orgScope(app, request), flow, trail, paging(q.page, q.per_page));
      return { data: page.data, pagination: pagination(page.total, q.page, q.per_page) };
    },
  );
};

export default routes;
