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
  ArtifactRecord,
  CreateArtifact,
  LatestCommit,
  MessageOk,
} from '../../../../shared/contract/artifacts.js';
import { TrailName } from '../../../../shared/contract/evidence-common.js';
import { NotFoundError } from '../../errors.js';
import { artifactsRepository } from '../../storage/repositories/artifacts.js';
import { attestationsRepository } from '../../storage/repositories/attestations.js';
import { flowsRepository } from '../../storage/repositories/flows.js';
import { reposRepository } from '../../storage/repositories/repos.js';
import {
  findArtifact,
  presentArtifacts,
  readArtifactRecord,
  recordArtifact,
} from '../../usecases/artifacts.js';
import { inTransaction, type OrgScope } from '../../usecases/org-scope.js';
import { flowNotFound, resolveFlow } from '../../usecases/flows.js';
import { FingerprintParam, FlowParams } from '../params.js';
import { paging } from '../paging.js';
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
      const { created } = await app.db
        .transaction()
        .execute((trx) => recordArtifact(inTransaction(scope, trx), request.params.flow, request.body));
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
      const scope = orgScope(app, request);
      const q = request.query;
      let flowId: string | undefined;
      let repoIds: string[] | undefined;
      if (q.flow_name !== undefined) {
        const flow = await flowsRepository.findByName(app.db, scope.org.id, q.flow_name);
        if (!flow) {
          throw flowNotFound(q.flow_name, scope.org.name);
        }
        flowId = flow.id;
      }
      if (q.repo_name !== undefined) {
        repoIds = (await reposRepository.findByName(app.db, scope.org.id, q.repo_name)).map((r) => r.id);
        if (repoIds.length === 0) {
          throw new NotFoundError(`Repo '${q.repo_name}' not found`);
        }
      }
      const rows = [];
      for (const repoId of repoIds ?? [undefined]) {
        rows.push(
          ...(await artifactsRepository.list(
            app.db,
            scope.org.id,
            { flowId, repoId },
            paging(q.page, q.per_page),
          )),
        );
      }
      return presentArtifacts(scope, rows);
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
      // as the JSON text the response schema made of it: a hit costs no serialization.
      const { flow: flowParam, fingerprint } = request.params;
      const cacheKey = `artifact\u0000${flowParam}\u0000${fingerprint}\u0000${request.query.trail ?? ''}\u0000${request.query.attestation_id ?? ''}\u0000${request.query.artifact_id ?? ''}`;
      let json = app.caches.evidence.get<string>(scope.org.id, cacheKey);
      if (json === undefined) {
        const epoch = app.caches.evidence.epoch(scope.org.id);
        json = serializeArtifactRecord(await readArtifactByFingerprint(scope, request.params, request.query));
        app.caches.evidence.set(scope.org.id, cacheKey, json, epoch);
      }
      return sendSerialized(reply, json);
    },
  );

  /** Endpoint 1 without the cache: a full fingerprint in one query; prefixes, ids and errors after. */
  async function readArtifactByFingerprint(
    scope: OrgScope,
    params: { flow: string; fingerprint: string },
    query: {
      trail?: string | undefined;
      attestation_id?: string | undefined;
      artifact_id?: string | undefined;
    },
  ): Promise<ArtifactRecord> {
    if (params.fingerprint.length === 64 && !query.attestation_id && !query.artifact_id) {
      const record = await readArtifactRecord(scope, params.flow, params.fingerprint, query.trail);
      if (record) {
        return record;
      }
    }
    const flow = await resolveFlow(scope, params.flow);
    let trailName = query.trail;
    if (query.attestation_id) {
      const [att] = await attestationsRepository.findByIds(app.db, scope.org.id, [query.attestation_id]);
      if (!att || att.flow_id !== flow.id) {
        throw new NotFoundError(
          `Attestation '${query.attestation_id}' does not exist in flow '${flow.name}'`,
        );
      }
      trailName = att.trail_name;
    }
    if (query.artifact_id) {
      const artifact = await artifactsRepository.findById(app.db, scope.org.id, query.artifact_id);
      if (!artifact || artifact.flow_id !== flow.id || !artifact.fingerprint.startsWith(params.fingerprint)) {
        throw new NotFoundError(
          `Artifact '${query.artifact_id}' with fingerprint '${params.fingerprint}' does not exist in flow '${flow.name}'`,
        );
      }
      trailName = artifact.trail_name;
    }
    const row = await findArtifact(scope, flow, params.fingerprint, trailName);
    const [record] = await presentArtifacts(scope, [row]);
    return record!;
  }

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
      const scope = orgScope(app, request);
      const flow = await resolveFlow(scope, request.params.flow);
      const rows = await artifactsRepository.byCommit(
        app.db,
        scope.org.id,
        flow.id,
        request.params.commit_sha,
        request.query.trail,
      );
      return presentArtifacts(scope, rows);
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
      const flow = await flowsRepository.findByName(app.db, scope.org.id, request.params.flow);
      if (!flow) {
        return { latest_commit: null };
      }
      return {
        latest_commit: await artifactsRepository.latestCommit(
          app.db,
          scope.org.id,
          flow.id,
          request.query.branch,
        ),
      };
    },
  );
};

export default routes;
