/**
 * Notification configs (the Terraform provider's `kosli_notification_config`,
 * reference/peers-2026-11b.md section 2): read by anyone who reads the organization, with
 * webhook and Slack addresses masked below admin; changed and deleted by admins.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OkString, OrgName, errorResponses } from '../../../../shared/contract/common.js';
import {
  NOTIFICATION_TYPES,
  NotificationConfig,
  NotificationConfigPut,
} from '../../../../shared/contract/notification-config.js';
import { roleAllows } from '../../domain/roles.js';
import { requireRole } from '../../plugins/auth.js';
import {
  deleteNotificationConfig,
  getNotificationConfig,
  putNotificationConfig,
} from '../../usecases/notifications/notification-config.js';
import { sendOk } from '../reply.js';
import { orgScope } from '../request-context.js';
import { NoBody } from '../request-schemas.js';

const tags = ['notification configs'];
const Params = z.strictObject({
  org: OrgName,
  notification_type: z.enum(NOTIFICATION_TYPES, {
    error: `Input should be ${NOTIFICATION_TYPES.map((t) => `'${t}'`).join(' or ')}`,
  }),
});
const PERMISSION = 'org:admin';

/** Readers below admin see webhook and Slack addresses reduced to scheme and host. */
const fullAddresses = (request: FastifyRequest) => roleAllows(requireRole(request), PERMISSION);

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const url = '/notification-config/:org/:notification_type';

  app.get(
    url,
    {
      config: { auth: { permission: PERMISSION } },
      schema: {
        operationId: 'getNotificationConfig',
        summary: 'The recipients of a notification type; empty targets when Verity derives them',
        tags,
        params: Params,
        response: { 200: NotificationConfig, ...errorResponses },
      },
    },
    async (request) =>
      getNotificationConfig(orgScope(app, request), request.params.notification_type, fullAddresses(request)),
  );

  app.put(
    url,
    {
      config: { auth: { permission: PERMISSION } },
      schema: {
        operationId: 'putNotificationConfig',
        summary: 'Set the recipients of a notification type (replaces the derived ones)',
        tags,
        params: Params,
        body: NotificationConfigPut,
        response: { 200: NotificationConfig, 201: NotificationConfig, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { created, config } = await putNotificationConfig(
        orgScope(app, request),
        request.params.notification_type,
        request.body,
      );
      return reply.code(created ? 201 : 200).send(config);
    },
  );

  app.delete(
    url,
    {
      config: { auth: { permission: PERMISSION } },
      schema: {
        operationId: 'deleteNotificationConfig',
        summary: 'Remove the recipients of a notification type: Verity derives them again',
        tags,
        params: Params,
        body: NoBody,
        response: { 200: OkString, ...errorResponses },
      },
    },
    async (request, reply) => {
      await deleteNotificationConfig(orgScope(app, request), request.params.notification_type);
      return sendOk(reply);
    },
  );
};

export default routes;
