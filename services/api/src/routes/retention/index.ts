/**
 * Retention classes, legal holds and disposition records (README "Retention", "Legal holds"):
 * settings of the organization, so admins alone read and change them.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  OkString,
  OrgName,
  OrgParams,
  QueryInt,
  ResourceName,
  errorResponses,
} from '../../../../shared/contract/common.js';
import {
  DispositionList,
  MAX_DISPOSITION_PAGE,
  LegalHold,
  LegalHoldList,
  LegalHoldPost,
  RetentionPut,
  RetentionSettings,
} from '../../../../shared/contract/retention.js';
import {
  createLegalHold,
  getRetention,
  listDispositions,
  listLegalHolds,
  putRetention,
  releaseLegalHold,
} from '../../usecases/retention/retention.js';
import { sendOk } from '../reply.js';
import { orgScope } from '../request-context.js';
import { NoBody } from '../request-schemas.js';

const PERMISSION = 'org:admin';
const auth = { auth: { permission: PERMISSION } } as const;

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const minimum = app.config.retentionMinimumDays;

  app.get(
    '/retention/:org',
    {
      config: auth,
      schema: {
        operationId: 'getRetention',
        summary: "The organization's retention classes, with the server's minimum per kind",
        tags: ['retention'],
        params: OrgParams,
        response: { 200: RetentionSettings, ...errorResponses },
      },
    },
    async (request) => getRetention(orgScope(app, request), minimum),
  );

  app.put(
    '/retention/:org',
    {
      config: auth,
      schema: {
        operationId: 'putRetention',
        summary: "Set the organization's retention classes (replaces them; a kind left out is kept forever)",
        tags: ['retention'],
        params: OrgParams,
        body: RetentionPut,
        response: { 200: RetentionSettings, ...errorResponses },
      },
    },
    async (request) => putRetention(orgScope(app, request), request.body, minimum),
  );

  app.get(
    '/retention/:org/dispositions',
    {
      config: auth,
      schema: {
        operationId: 'listDispositions',
        summary: 'What the retention job removed, newest first: one record per removal, with how many',
        tags: ['retention'],
        params: OrgParams,
        querystring: z.strictObject({
          page: QueryInt(1, MAX_DISPOSITION_PAGE).default(1),
          per_page: QueryInt(1, 100).default(20),
        }),
        response: { 200: DispositionList, ...errorResponses },
      },
    },
    async (request) => listDispositions(orgScope(app, request), request.query.page, request.query.per_page),
  );

  app.get(
    '/legal-holds/:org',
    {
      config: auth,
      schema: {
        operationId: 'listLegalHolds',
        summary: "The organization's legal holds and what each covers",
        tags: ['legal holds'],
        params: OrgParams,
        response: { 200: LegalHoldList, ...errorResponses },
      },
    },
    async (request) => listLegalHolds(orgScope(app, request)),
  );

  app.post(
    '/legal-holds/:org',
    {
      config: auth,
      schema: {
        operationId: 'createLegalHold',
        summary: 'Place a legal hold: nothing in its scope is removed while it exists',
        tags: ['legal holds'],
        params: OrgParams,
        body: LegalHoldPost,
        response: { 201: LegalHold, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createLegalHold(orgScope(app, request), request.body)),
  );

  app.delete(
    '/legal-holds/:org/:name',
    {
      config: auth,
      schema: {
        operationId: 'releaseLegalHold',
        summary: 'Release a legal hold: what it kept follows its retention class again',
        tags: ['legal holds'],
        params: z.strictObject({ org: OrgName, name: ResourceName }),
        body: NoBody,
        response: { 200: OkString, ...errorResponses },
      },
    },
    async (request, reply) => {
      await releaseLegalHold(orgScope(app, request), request.params.name);
      return sendOk(reply);
    },
  );
};

export default routes;
