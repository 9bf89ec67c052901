/**
 * Server-side policy evaluations (reference/peers-2026-11b.md 1.1-1.2), as `kosli evaluate
 * policy` and `kosli evaluate trail --server-side` send and poll them, and the organization's
 * switch that turns them off.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OrgParams, errorResponses } from '../../../../shared/contract/common.js';
import {
  Evaluation,
  EvaluationCreated,
  EvaluationInput,
  FeatureSwitch,
  FeatureSwitchInput,
} from '../../../../shared/contract/evaluations.js';
import {
  createEvaluation,
  readEvaluation,
  readFeature,
  setFeature,
} from '../../usecases/evaluations/evaluations.js';
import { orgScope } from '../request-context.js';

const tags = ['evaluations'];
const FeatureParams = OrgParams.extend({ feature: z.string().max(128) });

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/evaluations/:org',
    {
      config: { auth: { permission: 'evidence:write' } },
      schema: {
        operationId: 'createEvaluation',
        summary: 'Queue a server-side evaluation of a CEL policy bundle over trails (and write its decision)',
        tags,
        params: OrgParams,
        body: EvaluationInput,
        response: { 201: EvaluationCreated, ...errorResponses },
      },
    },
    async (request, reply) => {
      const created = await createEvaluation(orgScope(app, request), request.body);
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/evaluations/:org/:id',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getEvaluation',
        summary: 'A server-side evaluation: pending, completed (with its result) or failed (with its error)',
        tags,
        params: OrgParams.extend({ id: z.string().max(128) }),
        response: { 200: Evaluation, ...errorResponses },
      },
    },
    async (request) => readEvaluation(orgScope(app, request), request.params.id),
  );

  app.get(
    '/organizations/:org/features/:feature',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getOrganizationFeature',
        summary: 'Whether a feature (server-side-evaluation) is on for the organization',
        tags: ['organizations'],
        params: FeatureParams,
        response: { 200: FeatureSwitch, ...errorResponses },
      },
    },
    async (request) => readFeature(orgScope(app, request), request.params.feature),
  );

  app.put(
    '/organizations/:org/features/:feature',
    {
      config: { auth: { permission: 'org:admin' } },
      schema: {
        operationId: 'setOrganizationFeature',
        summary: 'Turn a feature (server-side-evaluation) on or off for the organization',
        tags: ['organizations'],
        params: FeatureParams,
        body: FeatureSwitchInput,
        response: { 200: FeatureSwitch, ...errorResponses },
      },
    },
    async (request) => setFeature(orgScope(app, request), request.params.feature, request.body.enabled),
  );
};

export default routes;
