/** Service accounts and their API keys (reference/cli-requests.md 3.11; spec endpoint 16). */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OkString, OrgName, errorResponses } from '../../../../shared/contract/common.js';
import {
  ApiKeyCreate,
  ApiKeyCreated,
  ApiKeyInfo,
  ApiKeyRotate,
  ApiKeyRotated,
  ServiceAccount,
  ServiceAccountCreate,
  ServiceAccountPatch,
} from '../../../../shared/contract/service-accounts.js';
import { requireOrg, requirePrincipal, requireRole } from '../../plugins/auth.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { epochOrZero, epochSeconds, newId } from '../../ids.js';
import { apiKeysRepository, type ApiKeyRow } from '../../storage/repositories/api-keys.js';
import { serviceAccountsRepository } from '../../storage/repositories/service-accounts.js';
import {
  DEFAULT_GRACE_PERIOD_HOURS,
  createServiceAccountKey,
  keyIsUsable,
  parseExpiresAt,
  rotateServiceAccountKey,
} from '../../usecases/api-keys.js';
import { principalRef } from '../../usecases/principal.js';
import {
  assertCanGrant,
  assertCanManage,
  getServiceAccount,
  presentServiceAccount,
} from '../../usecases/service-accounts.js';
import { NoBody, sendJsonString } from '../schemas.js';

const tags = ['service accounts'];
const AccountParams = z.strictObject({ org: OrgName, name: z.string().min(1).max(64) });
const KeyParams = AccountParams.extend({ key_id: z.string().min(1).max(64) });

function presentKey(row: ApiKeyRow): z.infer<typeof ApiKeyInfo> {
  return {
    id: row.id,
    description: row.description,
    created_at: epochSeconds(row.created_at),
    expires_at: epochOrZero(row.expires_at),
    last_used_at: epochOrZero(row.last_used_at),
  };
}

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/service-accounts/:org',
    {
      config: { auth: { permission: 'service-account:manage-own' } },
      schema: {
        operationId: 'createServiceAccount',
        summary: 'Create a service account',
        tags,
        params: z.strictObject({ org: OrgName }),
        body: ServiceAccountCreate,
        response: { 201: ServiceAccount, ...errorResponses },
      },
    },
    async (request, reply) => {
      const org = requireOrg(request);
      const principal = requirePrincipal(request);
      assertCanGrant(requireRole(request), request.body.privilege);
      const row = await serviceAccountsRepository.insert(app.db, {
        org_id: org.id,
        id: newId(),
        name: request.body.name,
        description: request.body.description ?? '',
        privilege: request.body.privilege,
        display_name: request.body.display_name ?? null,
        created_by_principal: principalRef(principal),
        created_by_name: principal.name,
      });
      if (!row) {
        throw new BadRequestError(
          `Service account '${request.body.name}' already exists in organization '${org.name}'`,
          {
            'body.name': 'already exists',
          },
        );
      }
      return reply.code(201).send(presentServiceAccount(row));
    },
  );

  app.get(
    '/service-accounts/:org',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'listServiceAccounts',
        summary: 'List service accounts',
        tags,
        params: z.strictObject({ org: OrgName }),
        response: { 200: z.array(ServiceAccount), ...errorResponses },
      },
    },
    async (request) => {
      const rows = await serviceAccountsRepository.list(app.db, requireOrg(request).id);
      return rows.map(presentServiceAccount);
    },
  );

  app.get(
    '/service-accounts/:org/:name',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getServiceAccount',
        summary: 'Get a service account',
        tags,
        params: AccountParams,
        response: { 200: ServiceAccount, ...errorResponses },
      },
    },
    async (request) =>
      presentServiceAccount(await getServiceAccount(app.db, requireOrg(request).id, request.params.name)),
  );

  app.patch(
    '/service-accounts/:org/:name',
    {
      config: { auth: { permission: 'service-account:manage-own' } },
      schema: {
        operationId: 'updateServiceAccount',
        summary: 'Update a service account',
        tags,
        params: AccountParams,
        body: ServiceAccountPatch,
        response: { 200: ServiceAccount, ...errorResponses },
      },
    },
    async (request) => {
      const org = requireOrg(request);
      const role = requireRole(request);
      const account = await getServiceAccount(app.db, org.id, request.params.name);
      assertCanManage(requirePrincipal(request), role, account);
      const patch: {
        description?: string;
        privilege?: typeof account.privilege;
        display_name?: string | null;
      } = {};
      if (request.body.description !== undefined) patch.description = request.body.description ?? '';
      if (request.body.display_name !== undefined) patch.display_name = request.body.display_name;
      if (request.body.privilege !== undefined) {
        assertCanGrant(role, request.body.privilege);
        patch.privilege = request.body.privilege;
      }
      if (Object.keys(patch).length === 0) return presentServiceAccount(account);
      const updated = await serviceAccountsRepository.update(app.db, org.id, account.id, patch);
      // This replica evicts at once; the others hear it from the database (migration 0300).
      app.caches.keys.clear();
      return presentServiceAccount(updated);
    },
  );

  app.delete(
    '/service-accounts/:org/:name',
    {
      config: { auth: { permission: 'service-account:manage-own' } },
      schema: {
        operationId: 'deleteServiceAccount',
        summary: 'Delete a service account and its keys',
        tags,
        params: AccountParams,
        body: NoBody,
        response: { 200: OkString, ...errorResponses },
      },
    },
    async (request, reply) => {
      const org = requireOrg(request);
      const account = await getServiceAccount(app.db, org.id, request.params.name);
      assertCanManage(requirePrincipal(request), requireRole(request), account);
      await serviceAccountsRepository.delete(app.db, org.id, account.id);
      app.caches.keys.clear();
      return sendJsonString(reply, 'OK');
    },
  );

  app.post(
    '/service-accounts/:org/:name/api-keys',
    {
      config: { auth: { permission: 'service-account:manage-own' } },
      schema: {
        operationId: 'createServiceAccountApiKey',
        summary: 'Create an API key; the key is shown only in this response',
        tags,
        params: AccountParams,
        body: ApiKeyCreate,
        response: { 201: ApiKeyCreated, ...errorResponses },
      },
    },
    async (request, reply) => {
      const org = requireOrg(request);
      const account = await getServiceAccount(app.db, org.id, request.params.name);
      assertCanManage(requirePrincipal(request), requireRole(request), account);
      const now = app.clock();
      const { row, key } = await createServiceAccountKey(app.db, {
        orgId: org.id,
        serviceAccountId: account.id,
        description: request.body.description,
        expiresAt: parseExpiresAt(request.body.expires_at, now),
        now,
      });
      return reply.code(201).send({
        id: row.id,
        key,
        description: row.description,
        created_at: epochSeconds(row.created_at),
        expires_at: epochOrZero(row.expires_at),
      });
    },
  );

  app.get(
    '/service-accounts/:org/:name/api-keys',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'listServiceAccountApiKeys',
        summary: 'List the active API keys of a service account (metadata only)',
        tags,
        params: AccountParams,
        response: { 200: z.array(ApiKeyInfo), ...errorResponses },
      },
    },
    async (request) => {
      const org = requireOrg(request);
      const account = await getServiceAccount(app.db, org.id, request.params.name);
      const rows = await apiKeysRepository.listActiveForServiceAccount(
        app.db,
        org.id,
        account.id,
        app.clock(),
      );
      return rows.map(presentKey);
    },
  );

  app.get(
    '/service-accounts/:org/:name/api-keys/:key_id',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getServiceAccountApiKey',
        summary: 'Get the metadata of an API key',
        tags,
        params: KeyParams,
        response: { 200: ApiKeyInfo, ...errorResponses },
      },
    },
    async (request) => {
      const org = requireOrg(request);
      const account = await getServiceAccount(app.db, org.id, request.params.name);
      const row = await apiKeysRepository.findForServiceAccount(
        app.db,
        org.id,
        account.id,
        request.params.key_id,
      );
      if (!row || !keyIsUsable(row, app.clock())) throw new NotFoundError('API key not found');
      return presentKey(row);
    },
  );

  app.post(
    '/service-accounts/:org/:name/api-keys/:key_id/rotate',
    {
      config: { auth: { permission: 'service-account:manage-own' } },
      schema: {
        operationId: 'rotateServiceAccountApiKey',
        summary: 'Rotate an API key: a new key now, the old one valid for the grace period',
        tags,
        params: KeyParams,
        body: ApiKeyRotate.nullable().optional(),
        response: { 201: ApiKeyRotated, ...errorResponses },
      },
    },
    async (request, reply) => {
      const org = requireOrg(request);
      const account = await getServiceAccount(app.db, org.id, request.params.name);
      assertCanManage(requirePrincipal(request), requireRole(request), account);
      const now = app.clock();
      const body = request.body ?? {};
      const rotated = await rotateServiceAccountKey(app.db, {
        orgId: org.id,
        serviceAccountId: account.id,
        keyId: request.params.key_id,
        gracePeriodHours: body.grace_period_hours ?? DEFAULT_GRACE_PERIOD_HOURS,
        expiresAt: parseExpiresAt(body.expires_at, now),
        now,
      });
      app.caches.keys.clear();
      const { row, key, graceEndsAt } = rotated;
      return reply.code(201).send({
        id: row.id,
        key,
        description: row.description,
        created_at: epochSeconds(row.created_at),
        expires_at: epochOrZero(row.expires_at),
        grace_period_expires_at: epochSeconds(graceEndsAt),
      });
    },
  );

  // Spec endpoint 16.
  app.delete(
    '/service-accounts/:org/:name/api-keys/:key_id',
    {
      config: { auth: { permission: 'service-account:manage-own' } },
      schema: {
        operationId: 'revokeServiceAccountApiKey',
        summary: 'Revoke an API key at once; a second revoke is 404',
        tags,
        params: KeyParams,
        body: NoBody,
        response: { 200: OkString, ...errorResponses },
      },
    },
    async (request, reply) => {
      const org = requireOrg(request);
      const account = await getServiceAccount(app.db, org.id, request.params.name);
      assertCanManage(requirePrincipal(request), requireRole(request), account);
      const row = await apiKeysRepository.findForServiceAccount(
        app.db,
        org.id,
        account.id,
        request.params.key_id,
      );
      const now = app.clock();
      if (!row || !keyIsUsable(row, now) || !(await apiKeysRepository.revoke(app.db, row.id, now))) {
        throw new NotFoundError('API key not found');
      }
      // Revocation is immediate here; other replicas hear it from the database (migration 0300).
      app.caches.keys.clear();
      return sendJsonString(reply, 'revoked');
    },
  );
};

export default routes;
