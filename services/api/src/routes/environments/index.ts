/**
 * Environments and their reports (reference/cli-requests.md 3.5 and 3.6; spec endpoints 3, 7, 8
 * and 9; Terraform's PATCH). Reports are in reports.ts.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OkString, OrgParams, errorResponses } from '../../../../shared/contract/common.js';
import {
  Environment,
  EnvironmentEvent,
  EnvironmentEventsQuery,
  EnvironmentJoin,
  EnvironmentListQuery,
  EnvironmentPage,
  EnvironmentPatch,
  EnvironmentPut,
  EnvironmentRename,
  PolicyNames,
} from '../../../../shared/contract/environments.js';
import { requireRole } from '../../plugins/auth.js';
import {
  archiveEnvironment,
  changePolicies,
  getEnvironment,
  joinEnvironment,
  patchEnvironment,
  putEnvironment,
  readEnvironment,
  renameEnvironment,
} from '../../usecases/runtime/environments.js';
import { listEnvironments, presentEnvironments } from '../../usecases/runtime/environment-present.js';
import { listEvents } from '../../usecases/runtime/environment-events.js';
import { sendJsonString, sendOk } from '../reply.js';
import { NoBody } from '../request-schemas.js';
import { EnvParams } from '../params.js';
import { orgScope } from '../request-context.js';
import reports from './reports.js';

const tags = ['environments'];

const list = (v: string | string[] | undefined): string[] =>
  v === undefined ? [] : (Array.isArray(v) ? v : [v]).flatMap((x) => x.split(',')).filter((x) => x !== '');

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  // Reports: their own body handling (the bytes' hash), in their own context.
  await app.register(reports);

  app.put(
    '/environments/:org',
    {
      config: { auth: { permission: 'environment:create' } },
      schema: {
        operationId: 'putEnvironment',
        summary: 'Create or update an environment',
        tags,
        params: OrgParams,
        body: EnvironmentPut,
        response: { 200: OkString, 201: OkString, ...errorResponses },
      },
    },
    async (request, reply) =>
      sendOk(reply, await putEnvironment(orgScope(app, request), request.body, requireRole(request))),
  );

  app.get(
    '/environments/:org',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'listEnvironments',
        summary: 'List environments: a plain array, or a page when page or per_page is given',
        tags,
        params: OrgParams,
        querystring: EnvironmentListQuery,
        response: { 200: z.union([z.array(Environment), EnvironmentPage]), ...errorResponses },
      },
    },
    async (request) => {
      const scope = orgScope(app, request);
      const q = request.query;
      const paged = q.page !== undefined || q.per_page !== undefined;
      const page = q.page ?? 1;
      const perPage = q.per_page ?? 20;
      const { environments, total } = await listEnvironments(scope, {
        ...(q.name ? { name: q.name } : {}),
        types: list(q.type),
        tags: list(q.tag).map((t) => {
          const i = t.indexOf(':');
          return i < 0 ? { key: t } : { key: t.slice(0, i), value: t.slice(i + 1) };
        }),
        sort: q.sort ?? 'name',
        direction: q.sort_direction ?? 'asc',
        ...(paged ? { limit: perPage, offset: (page - 1) * perPage } : {}),
      });
      if (!paged) {
        return environments;
      }
      return {
        page,
        per_page: perPage,
        total_pages: Math.ceil(total / perPage),
        total_count: total,
        environments,
      };
    },
  );

  app.get(
    '/environments/:org/:env_name',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getEnvironment',
        summary: 'Get an environment (404 when it does not exist or has been archived)',
        tags,
        params: EnvParams,
        response: { 200: Environment, ...errorResponses },
      },
    },
    async (request) => {
      const scope = orgScope(app, request);
      const env = await readEnvironment(scope, request.params.env_name);
      return (await presentEnvironments(scope, [env]))[0]!;
    },
  );

  app.patch(
    '/environments/:org/:env_name',
    {
      config: { auth: { permission: 'environment:write' } },
      schema: {
        operationId: 'patchEnvironment',
        summary: 'Update the given fields of an environment',
        tags,
        params: EnvParams,
        body: EnvironmentPatch,
        response: { 200: Environment, ...errorResponses },
      },
    },
    async (request) => {
      const scope = orgScope(app, request);
      await patchEnvironment(scope, request.params.env_name, request.body);
      const env = await getEnvironment(scope, request.params.env_name);
      return (await presentEnvironments(scope, [env]))[0]!;
    },
  );

  const simpleWrite = <B extends z.ZodType>(
    path: string,
    operationId: string,
    summary: string,
    body: B,
    run: (request: FastifyRequest<{ Params: z.infer<typeof EnvParams>; Body: z.infer<B> }>) => Promise<void>,
  ) =>
    app.put(
      path,
      {
        config: { auth: { permission: 'environment:write' } },
        schema: {
          operationId,
          summary,
          tags,
          params: EnvParams,
          body,
          response: { 200: OkString, ...errorResponses },
        },
      },
      async (request, reply) => {
        await run(request as never);
        return sendOk(reply);
      },
    );

  simpleWrite(
    '/environments/:org/:env_name/rename',
    'renameEnvironment',
    'Rename an environment',
    EnvironmentRename,
    (r) => renameEnvironment(orgScope(app, r), r.params.env_name, r.body.new_name),
  );
  simpleWrite(
    '/environments/:org/:env_name/archive',
    'archiveEnvironment',
    'Archive an environment',
    NoBody,
    (r) => archiveEnvironment(orgScope(app, r), r.params.env_name),
  );
  simpleWrite(
    '/environments/:org/:env_name/join',
    'joinEnvironment',
    'Add a physical environment to a logical one',
    EnvironmentJoin,
    (r) => joinEnvironment(orgScope(app, r), r.params.env_name, r.body.physical_env_name),
  );

  for (const [method, mode] of [
    ['POST', 'attach'],
    ['DELETE', 'detach'],
  ] as const) {
    app.route({
      method,
      url: '/environments/:org/:env_name/policies',
      config: { auth: { permission: 'environment:write' } },
      schema: {
        operationId: mode === 'attach' ? 'attachPolicies' : 'detachPolicies',
        summary:
          mode === 'attach' ? 'Attach policies to an environment' : 'Detach policies from an environment',
        tags,
        params: EnvParams,
        body: PolicyNames,
        response: { 200: OkString, ...errorResponses },
      },
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const params = request.params as z.infer<typeof EnvParams>;
        const body = request.body as z.infer<typeof PolicyNames>;
        await changePolicies(orgScope(app, request), params.env_name, body.policy_names, mode);
        return sendJsonString(reply, mode === 'attach' ? 'Policies attached' : 'Policies detached');
      },
    });
  }

  app.get(
    '/environments/:org/:env_name/events',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'listEnvironmentEvents',
        summary: 'List the events of an environment (starts, exits, changes), newest first',
        tags,
        params: EnvParams,
        querystring: EnvironmentEventsQuery,
        response: { 200: z.array(EnvironmentEvent), ...errorResponses },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const { events, total } = await listEvents(orgScope(app, request), request.params.env_name, q);
      const pages = Math.ceil(total / q.per_page);
      void reply.headers({
        'x-total-count': String(total),
        'x-per-page': String(q.per_page),
        'x-current-page': String(q.page),
        'x-total-pages': String(pages),
      });
      return events;
    },
  );
};

export default routes;
