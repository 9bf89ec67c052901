/** People: who is calling, the organization's members, and its audit log. */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { OrgParams, errorResponses } from '../../../../shared/contract/common.js';
import { AuditLog, AuditLogQuery, Me, Members } from '../../../../shared/contract/people.js';
import { requirePrincipal } from '../../plugins/auth.js';
import { readAuditLog } from '../../usecases/access/audit-log.js';
import { listMembers, whoAmI } from '../../usecases/access/people.js';
import { orgScope } from '../request-context.js';

const tags = ['people'];

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/me',
    {
      config: { auth: { permission: 'authenticated' } },
      schema: {
        operationId: 'getMe',
        summary: 'Who the caller is: a person or a service account, with their organizations and roles',
        tags,
        response: { 200: Me, ...errorResponses },
      },
    },
    async (request) => whoAmI(app.db, requirePrincipal(request)),
  );

  app.get(
    '/organizations/:org/members',
    {
      config: { auth: { permission: 'org:admin' } },
      schema: {
        operationId: 'listMembers',
        summary: 'The people of the organization, their roles and last sign-in (admin only)',
        tags,
        params: OrgParams,
        response: { 200: Members, ...errorResponses },
      },
    },
    async (request) => ({ members: await listMembers(orgScope(app, request)) }),
  );

  app.get(
    '/audit-log/:org',
    {
      config: { auth: { permission: 'org:admin' } },
      schema: {
        operationId: 'getAuditLog',
        summary: 'Every write through the API and every sign-in, newest first (admin only)',
        description:
          'One entry per successful write (create, update, archive, attach, override, key and account changes) ' +
          'and per sign-in through the identity provider. `from`/`to` take epoch seconds or ISO 8601; ' +
          '`actor` matches a name or e-mail exactly; pages of `per_page` (at most 100), up to page 1000.',
        tags,
        params: OrgParams,
        querystring: AuditLogQuery,
        response: { 200: AuditLog, ...errorResponses },
      },
    },
    async (request) => readAuditLog(orgScope(app, request), request.query),
  );
};

export default routes;
