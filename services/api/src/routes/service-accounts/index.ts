/** Service accounts and their API keys (reference/cli-requests.md 3.11; spec endpoint 16). */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
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
import { requirePrincipal, requireRole } from '../../plugins/auth.js';
import {
  createAccountKey,
  listAccountKeys,
  readAccountKey,
  revokeAccountKey,
  rotateAccountKey,
  type KeyScope,
} from '../../usecases/access/service-account-keys.js';
import {
  createServiceAccount,
  deleteServiceAccount,
  getServiceAccount,
  listServiceAccounts,
  presentServiceAccount,
  updateServiceAccount,
  type AccountCaller,
} from '../../usecases/access/service-accounts.js';
import { sendJsonString, sendOk } from '../reply.js';
import { orgScope } from '../request-context.js';
import { NoBody } from '../request-schemas.js';

const tags = ['service accounts'];
const AccountParams = z.strictObject({ org: OrgName, name: z.string().min(1).max(64) });
const KeyParams = AccountParams.extend({ key_id: z.string().min(1).max(64) });

/** The caller as service-account rules see it. */
function caller(request: FastifyRequest): AccountCaller {
  return { principal: requirePrincipal(request), role: requireRole(request) };
}

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const keyScope = (request: FastifyRequest, account: string): KeyScope => ({
    ...orgScope(app, request),
    account,
    maxActiveKeys: app.config.maxActiveKeysPerOrg,
  });

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
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await createServiceAccount(
            orgScope(app, request),
            caller(request),
            request.body,
            app.config.maxServiceAccountsPerOrg,
          ),
        ),
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
    async (request) => listServiceAccounts(orgScope(app, request)),
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
      presentServiceAccount(await getServiceAccount(orgScope(app, request), request.params.name)),
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
      const { account, changed } = await updateServiceAccount(
        orgScope(app, request),
        caller(request),
        request.params.name,
        request.body,
      );
      if (changed) {
        // This replica evicts at once; the others hear it from the database (migration 0300).
        app.caches.keys.clear();
      }
      return account;
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
      await deleteServiceAccount(orgScope(app, request), caller(request), request.params.name);
      app.caches.keys.clear();
      return sendOk(reply);
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
    async (request, reply) =>
      reply
        .code(201)
        .send(await createAccountKey(keyScope(request, request.params.name), caller(request), request.body)),
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
    async (request) => listAccountKeys(keyScope(request, request.params.name)),
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
    async (request) => readAccountKey(keyScope(request, request.params.name), request.params.key_id),
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
      const rotated = await rotateAccountKey(
        keyScope(request, request.params.name),
        caller(request),
        request.params.key_id,
        request.body,
      );
      app.caches.keys.clear();
      return reply.code(201).send(rotated);
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
      await revokeAccountKey(keyScope(request, request.params.name), caller(request), request.params.key_id);
      // Revocation is immediate here; other replicas hear it from the database (migration 0300).
      app.caches.keys.clear();
      return sendJsonString(reply, 'revoked');
    },
  );
};

export default routes;
