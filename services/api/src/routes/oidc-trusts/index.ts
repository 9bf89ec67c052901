/**
 * Keyless CI: the OIDC ID-token issuers a service account trusts. Admins only, reads included:
 * a trust says which CI repositories and branches may act as the account.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OkString, OrgName, errorResponses } from '../../../../shared/contract/common.js';
import { OidcTrust, OidcTrustName, OidcTrustPut } from '../../../../shared/contract/oidc-trusts.js';
import { OIDC_TRUST_LIMITS } from '../../domain/oidc-trust.js';
import {
  deleteOidcTrust,
  getOidcTrust,
  listOidcTrusts,
  putOidcTrust,
  type TrustScope,
} from '../../usecases/access/oidc-trusts.js';
import { sendOk } from '../reply.js';
import { orgScope } from '../request-context.js';
import { NoBody } from '../request-schemas.js';

const tags = ['service accounts'];
const AccountParams = z.strictObject({ org: OrgName, name: z.string().min(1).max(64) });
const TrustParams = AccountParams.extend({ trust: OidcTrustName });
const auth = { permission: 'service-account:manage' } as const;

const PUT_DESCRIPTION = `A CI job's OIDC ID token (GitHub Actions, GitLab CI, CircleCI, Buildkite) sent as \`Authorization: Bearer <token>\` on this organization's routes acts as the service account when it is signed by the issuer (keys from its discovery document), unexpired, carries the audience, and every claim matches (exactly, or by prefix with a trailing \`*\`). A token matching trusts of several accounts is refused. Bounds: a service account holds at most ${OIDC_TRUST_LIMITS.maxPerServiceAccount} trusts and an organization ${OIDC_TRUST_LIMITS.maxPerOrganization} (409 beyond); the body's bounds are in its schema. 201 when created, 200 when replaced.`;

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const trustScope = (request: FastifyRequest, account: string): TrustScope => ({
    ...orgScope(app, request),
    account,
    insecureIssuers: app.config.oidcInsecureIssuers,
  });

  app.put(
    '/service-accounts/:org/:name/oidc-trusts/:trust',
    {
      config: { auth },
      schema: {
        operationId: 'putServiceAccountOidcTrust',
        summary: 'Create or replace an OIDC trust: CI ID tokens of an issuer act as the service account',
        description: PUT_DESCRIPTION,
        tags,
        params: TrustParams,
        body: OidcTrustPut,
        response: { 200: OidcTrust, 201: OidcTrust, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { trust, created } = await putOidcTrust(
        trustScope(request, request.params.name),
        request.params.trust,
        request.body,
      );
      return reply.code(created ? 201 : 200).send(trust);
    },
  );

  app.get(
    '/service-accounts/:org/:name/oidc-trusts',
    {
      config: { auth },
      schema: {
        operationId: 'listServiceAccountOidcTrusts',
        summary: 'List the OIDC trusts of a service account',
        tags,
        params: AccountParams,
        response: { 200: z.array(OidcTrust), ...errorResponses },
      },
    },
    async (request) => listOidcTrusts(trustScope(request, request.params.name)),
  );

  app.get(
    '/service-accounts/:org/:name/oidc-trusts/:trust',
    {
      config: { auth },
      schema: {
        operationId: 'getServiceAccountOidcTrust',
        summary: 'Get an OIDC trust of a service account',
        tags,
        params: TrustParams,
        response: { 200: OidcTrust, ...errorResponses },
      },
    },
    async (request) => getOidcTrust(trustScope(request, request.params.name), request.params.trust),
  );

  app.delete(
    '/service-accounts/:org/:name/oidc-trusts/:trust',
    {
      config: { auth },
      schema: {
        operationId: 'deleteServiceAccountOidcTrust',
        summary: 'Remove an OIDC trust at once',
        tags,
        params: TrustParams,
        body: NoBody,
        response: { 200: OkString, ...errorResponses },
      },
    },
    async (request, reply) => {
      await deleteOidcTrust(trustScope(request, request.params.name), request.params.trust);
      return sendOk(reply);
    },
  );
};

export default routes;
