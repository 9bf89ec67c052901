/** Artifacts (spec endpoint 1; reference/cli-requests.md 3.3). The audit package is in ../audit. */
import type { FastifyPluginAsync } from 'fastify';
import { serializerCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  ID_PATTERN,
  OrgParams,
  QueryInt,
  ResourceName,
  errorResponses,
} from '../../../../shared/contract/common.js';
import {
  ArtifactHistoryPage,
  ArtifactRecord,
  CreateArtifact,
  LatestCommit,
  MessageOk,
} from '../../../../shared/contract/artifacts.js';
import { TrailName } from '../../../../shared/contract/evidence-common.js';
import {
  artifactHistoryPage,
  artifactsByCommit,
  latestArtifactCommit,
  listArtifacts,
  readArtifactByFingerprint,
} from '../../usecases/evidence/artifact-reads.js';
import { recordArtifact } from '../../usecases/evidence/artifacts.js';
import { transact } from '../../usecases/scope/org-scope.js';
import { FingerprintParam, FlowParams } from '../params.js';
import { pagination, paging } from '../paging.js';
import { orgScope } from '../request-context.js';
import { sendSerialized } from '../reply.js';

const tags = ['artifacts'];

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/artifacts/:org/:flow',
    {
      config: { auth: { permission: 'evidence:write' } },
      schema: {
        operationId: 'reportArtifact',
        summary: 'Report an artifact to a trail (201 when new, 200 when reported again)',
        tags,
        params: FlowParams,
        body: CreateArtifact,
        response: { 200: MessageOk, 201: MessageOk, ...errorResponses },
      },
    },
    async (request, reply) => {
      const scope = orgScope(app, request);
      const { created } = await transact(scope, (s) => recordArtifact(s, request.params.flow, request.body));
      return reply.code(created ? 201 : 200).send({ message: 'OK' });
    },
  );

  app.get(
    '/artifacts/:org',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'listArtifacts',
        summary: 'List artifacts of a flow or a repo, newest first (a plain array)',
        tags,
        params: OrgParams,
        querystring: z.strictObject({
          flow_name: ResourceName.optional(),
          repo_name: z.string().max(512).optional(),
          page: QueryInt(1, 100_000).optional().default(1),
          per_page: QueryInt(1, 100).optional().default(15),
        }),
        response: { 200: z.array(ArtifactRecord), ...errorResponses },
      },
    },
    async (request) => {
      const q = request.query;
      return listArtifacts(
        orgScope(app, request),
        { flowName: q.flow_name, repoName: q.repo_name },
        paging(q.page, q.per_page),
      );
    },
  );

  /** What the route's response schema makes of a record (the serializer fastify would use). */
  const serializeArtifactRecord = serializerCompiler({
    schema: ArtifactRecord,
    method: 'GET',
    url: '/artifacts/:org/:flow/fingerprint/:fingerprint',
    httpStatus: '200',
  }) as (record: ArtifactRecord) => string;

  // Spec endpoint 1.
  app.get(
    '/artifacts/:org/:flow/fingerprint/:fingerprint',
    {
      config: { auth: { permission: 'read', basic: true } },
      schema: {
        operationId: 'getArtifactByFingerprint',
        summary: 'Get an artifact by fingerprint or a 5-64 hex prefix (in its latest trail unless ?trail=)',
        tags,
        params: FlowParams.extend({ fingerprint: FingerprintParam }),
        querystring: z.strictObject({
          trail: TrailName.optional(),
          attestation_id: z.string().regex(ID_PATTERN, 'must be an 8-4-4-4-8 lowercase hex id').optional(),
          /** The artifact record's own id, as its html_url carries it: the trail it was reported in. */
          artifact_id: z.string().regex(ID_PATTERN, 'must be an 8-4-4-4-8 lowercase hex id').optional(),
        }),
        response: { 200: ArtifactRecord, ...errorResponses },
      },
    },
    async (request, reply) => {
      const scope = orgScope(app, request);
      // Served from the org's read cache while none of its evidence changed (plugins/caches.ts),
      // as the UTF-8 bytes of the JSON text the response schema made of it: a hit costs no
      // serialization and no encoding.
      const { flow: flowParam, fingerprint } = request.params;
      const cacheKey = `artifact\u0000${flowParam}\u0000${fingerprint}\u0000${request.query.trail ?? ''}\u0000${request.query.attestation_id ?? ''}\u0000${request.query.artifact_id ?? ''}`;
      let body = app.caches.evidence.get<Buffer>(scope.org.id, cacheKey);
      if (body === undefined) {
        const epoch = app.caches.evidence.epoch(scope.org.id);
        const record = await readArtifactByFingerprint(scope, request.params, request.query);
        body = Buffer.from(serializeArtifactRecord(record));
        // Not kept before the record is in the log: its log_index comes within the sequencer's round.
        if (record.log_index !== null || !app.config.transparencyLog) {
          app.caches.evidence.set(scope.org.id, cacheKey, body, epoch);
        }
      }
      return sendSerialized(reply, body);
    },
  );

  app.get(
    '/artifacts/:org/:flow/fingerprint/:fingerprint/history',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getArtifactHistory',
        summary: "A page of an artifact's whole history, oldest first (in its latest trail unless ?trail=)",
        tags,
        params: FlowParams.extend({ fingerprint: FingerprintParam }),
        querystring: z.strictObject({
          trail: TrailName.optional(),
          page: QueryInt(1, 100_000).optional().default(1),
          per_page: QueryInt(1, 1000).optional().default(100),
        }),
        response: { 200: ArtifactHistoryPage, ...errorResponses },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await artifactHistoryPage(
        orgScope(app, request),
        request.params,
        q.trail,
        paging(q.page, q.per_page),
      );
      return { data: page.data, pagination: pagination(page.total, q.page, q.per_page) };
    },
  );

  app.get(
    '/artifacts/:org/:flow/commit_sha/:commit_sha',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getArtifactsByCommit',
        summary: 'The artifacts of a flow built from a commit (an array)',
        tags,
        params: FlowParams.extend({
          commit_sha: z.string().regex(/^[a-f0-9]{40}$/, 'must be 40 lowercase hex characters'),
        }),
        querystring: z.strictObject({ trail: TrailName.optional() }),
        response: { 200: z.array(ArtifactRecord), ...errorResponses },
      },
    },
    async (request) => {
      const { flow, commit_sha } = request.params;
      return artifactsByCommit(orgScope(app, request), flow, commit_sha, request.query.trail);
    },
  );

  app.get(
    '/artifacts/:org/:flow/:fingerprint/latest_commit',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getLatestArtifactCommit',
        summary: 'The latest commit reported in the flow (on a branch when given), or null',
        tags,
        params: FlowParams.extend({ fingerprint: FingerprintParam }),
        querystring: z.strictObject({ branch: z.string().max(1024).optional() }),
        response: { 200: LatestCommit, ...errorResponses },
      },
    },
    async (request) => {
      const scope = orgScope(app, request);
      return { latest_commit: await latestArtifactCommit(scope, request.params.flow, request.query.branch) };
    },
  );
};

export default routes;
