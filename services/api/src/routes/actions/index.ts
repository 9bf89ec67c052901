/**
 * Actions (spec endpoints 4, 5, 6 and 19) and the environments_notifications routes the
 * Terraform provider uses.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OkString, OrgName, errorResponses } from '../../../../shared/contract/common.js';
import {
  Action,
  EnvActionPut,
  FlowActionPut,
  WebhookSigningKey,
} from '../../../../shared/contract/actions.js';
import { roleAllows } from '../../domain/roles.js';
import { requireRole } from '../../plugins/auth.js';
import {
  deleteAction,
  getAction,
  listActions,
  putAction,
  type ActionInput,
} from '../../usecases/notifications/actions.js';
import {
  orgSigningKey,
  presentSigningKey,
  rotateOrgSigningKey,
} from '../../usecases/notifications/webhook-signing.js';
import { sendOk } from '../reply.js';
import { orgScope } from '../request-context.js';
import { NoBody } from '../request-schemas.js';

const tags = ['actions'];
const OrgOnly = z.strictObject({ org: OrgName });
const ActionNumber = z.coerce.number().int().min(1).max(2_147_483_647);

/** Readers below `action:write` see webhook and Slack addresses reduced to scheme and host. */
const fullAddresses = (request: FastifyRequest) => roleAllows(requireRole(request), 'action:write');

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const envInput = (b: z.infer<typeof EnvActionPut>): ActionInput => ({
    name: b.name,
    type: 'env',
    environments: b.environments,
    flows: [],
    triggers: b.triggers,
    targets: b.targets,
  });

  const putEnv = (url: string, operationId: string, summary: string) =>
    app.put(
      url,
      {
        config: { auth: { permission: 'action:write' } },
        schema: {
          operationId,
          summary,
          tags,
          params: OrgOnly,
          body: EnvActionPut,
          response: { 200: OkString, 201: OkString, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { created } = await putAction(orgScope(app, request), envInput(request.body));
        return sendOk(reply, created);
      },
    );
  putEnv(
    '/actions/:org/environments',
    'putEnvironmentAction',
    'Create or update an environment action (by name)',
  );
  putEnv(
    '/organizations/:org/environments_notifications',
    'putEnvironmentNotification',
    'Create or update an environment notification (by name)',
  );

  app.put(
    '/actions/:org/flows',
    {
      config: { auth: { permission: 'action:write' } },
      schema: {
        operationId: 'putFlowAction',
        summary: 'Create or update a flow action (by name)',
        tags,
        params: OrgOnly,
        body: FlowActionPut,
        response: { 200: OkString, 201: OkString, ...errorResponses },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const { created } = await putAction(orgScope(app, request), {
        name: b.name,
        type: 'flow',
        environments: [],
        flows: b.flows,
        triggers: b.triggers,
        targets: b.targets,
      });
      return sendOk(reply, created);
    },
  );

  const listRoute = (url: string, operationId: string, type?: 'env') =>
    app.get(
      url,
      {
        config: { auth: { permission: 'read' } },
        schema: {
          operationId,
          summary: type ? 'List environment notifications' : 'List actions',
          tags,
          params: OrgOnly,
          response: { 200: z.array(Action), ...errorResponses },
        },
      },
      async (request) => {
        return listActions(orgScope(app, request), type, fullAddresses(request));
      },
    );
  listRoute('/actions/:org', 'listActions');
  listRoute('/organizations/:org/environments_notifications', 'listEnvironmentNotifications', 'env');

  const byNumber = (url: string, param: 'action_number' | 'notification_number', prefix: string) => {
    const Params = z.strictObject({ org: OrgName, [param]: ActionNumber }) as unknown as z.ZodType<
      { org: string } & Record<string, number>
    >;
    const numberOf = (request: FastifyRequest) => (request.params as Record<string, number>)[param]!;
    app.get(
      url,
      {
        config: { auth: { permission: 'read' } },
        schema: {
          operationId: `get${prefix}`,
          summary: `Get an ${prefix === 'Action' ? 'action' : 'environment notification'} by number`,
          tags,
          params: Params,
          response: { 200: Action, ...errorResponses },
        },
      },
      async (request) => {
        return getAction(orgScope(app, request), numberOf(request), fullAddresses(request));
      },
    );
    app.delete(
      url,
      {
        config: { auth: { permission: 'action:write' } },
        schema: {
          operationId: `delete${prefix}`,
          summary: `Delete an ${prefix === 'Action' ? 'action' : 'environment notification'} by number`,
          tags,
          params: Params,
          body: NoBody,
          response: { 200: OkString, ...errorResponses },
        },
      },
      async (request, reply) => {
        await deleteAction(orgScope(app, request), numberOf(request));
        return sendOk(reply);
      },
    );
  };
  byNumber('/actions/:org/:action_number', 'action_number', 'Action');
  byNumber(
    '/organizations/:org/environments_notifications/:notification_number',
    'notification_number',
    'EnvironmentNotification',
  );

  app.put(
    '/organizations/:org/environments_notifications/:notification_number',
    {
      config: { auth: { permission: 'action:write' } },
      schema: {
        operationId: 'updateEnvironmentNotification',
        summary: 'Update an environment notification in place, keeping its number',
        tags,
        params: z.strictObject({ org: OrgName, notification_number: ActionNumber }),
        body: EnvActionPut,
        response: { 200: OkString, ...errorResponses },
      },
    },
    async (request, reply) => {
      await putAction(orgScope(app, request), envInput(request.body), request.params.notification_number);
      return sendOk(reply);
    },
  );

  app.get(
    '/organizations/:org/webhook-signing-key',
    {
      config: { auth: { permission: 'org:admin' } },
      schema: {
        operationId: 'getWebhookSigningKey',
        summary: "The organization's webhook signing key (generated on first read)",
        tags,
        params: OrgOnly,
        response: { 200: WebhookSigningKey, ...errorResponses },
      },
    },
    async (request, reply) => {
      const scope = orgScope(app, request);
      void reply.header('cache-control', 'no-store');
      return presentSigningKey(await orgSigningKey(scope), scope.now);
    },
  );

  app.post(
    '/organizations/:org/webhook-signing-key/rotate',
    {
      config: { auth: { permission: 'org:admin' } },
      schema: {
        operationId: 'rotateWebhookSigningKey',
        summary: 'Replace the webhook signing key; the replaced key also signs for 24 hours',
        tags,
        params: OrgOnly,
        body: NoBody,
        response: { 200: WebhookSigningKey, ...errorResponses },
      },
    },
    async (request, reply) => {
      const scope = orgScope(app, request);
      void reply.header('cache-control', 'no-store');
      return presentSigningKey(await rotateOrgSigningKey(scope), scope.now);
    },
  );
};

export default routes;
