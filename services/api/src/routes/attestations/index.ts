/**
 * Attestations (reference/cli-requests.md 3.4; spec endpoints 2 and 12): one multipart route per
 * kind (data_json + attachment_file), the JSON override, reads, and evidence file downloads.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  ID_PATTERN,
  OkString,
  OrgName,
  OrgParams,
  QueryBool,
  QueryInt,
  ResourceName,
  errorResponses,
} from '../../../../shared/contract/common.js';
import {
  ATTESTATION_INPUTS,
  ATTESTATION_KINDS,
  Attestation,
  AttestationCursorPage,
  AttestationForm,
  AttestationPage,
  OverrideInput,
  type AttestationKind,
} from '../../../../shared/contract/attestations.js';
import { AttestationName, TrailName } from '../../../../shared/contract/evidence-common.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { readMultipartForm } from '../../plugins/multipart.js';
import { compileUserPattern, UserPatternError } from '../../domain/user-pattern.js';
import { attestationsRepository } from '../../storage/repositories/attestations.js';
import { flowsRepository } from '../../storage/repositories/flows.js';
import { trailsRepository } from '../../storage/repositories/trails.js';
import { findArtifact } from '../../usecases/artifacts.js';
import { presentAttestation } from '../../usecases/attestation-present.js';
import { recordAttestation } from '../../usecases/attestations.js';
import { resolveFlow } from '../../usecases/flows.js';
import { trailNotFound } from '../../usecases/trails.js';
import {
  evidenceContext,
  FingerprintParam,
  pagination,
  paging,
  parseJsonPart,
  Repeated,
} from '../evidence-shared.js';
import { sendJsonString } from '../schemas.js';

const tags = ['attestations'];
const FlowParams = z.strictObject({ org: OrgName, flow: ResourceName });
const TrailParams = FlowParams.extend({ trail: TrailName });

/** The kind names shown in OpenAPI operation ids. */
const OPERATION_NAMES: Record<AttestationKind, string> = {
  generic: 'Generic',
  junit: 'JUnit',
  snyk: 'Scan',
  jira: 'Ticket',
  pull_request: 'PullRequest',
  sonar: 'Quality',
  custom: 'Custom',
  system: 'System',
};

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const services = () => app.evidence;

  for (const kind of ATTESTATION_KINDS) {
    app.post(
      `/attestations/:org/:flow/trail/:trail/${kind}`,
      {
        config: { auth: { permission: 'evidence:write' } },
        schema: {
          operationId: `post${OPERATION_NAMES[kind]}Attestation`,
          summary: `Report a ${kind} attestation (multipart: data_json, attachment_file)`,
          tags,
          params: TrailParams,
          consumes: ['multipart/form-data'],
          body: AttestationForm.nullable().optional(),
          response: { 201: OkString, ...errorResponses },
        },
      },
      async (request, reply) => {
        const ctx = evidenceContext(app, request);
        const parts = await readMultipartForm(request, {
          allowed: ['data_json', 'attachment_file'],
          required: ['data_json'],
          maxFileBytes: app.config.evidenceMaxBytes,
        });
        const data = parseJsonPart(parts.get('data_json'), 'data_json', ATTESTATION_INPUTS[kind]);
        const file = parts.get('attachment_file');
        await recordAttestation(
          ctx,
          { flowName: request.params.flow, trailName: request.params.trail },
          { kind, data } as Parameters<typeof recordAttestation>[2],
          file
            ? {
                filename: file.filename ?? 'evidence',
                data: file.data,
                sha256: file.sha256,
                mimetype: file.mimetype,
              }
            : null,
          services(),
        );
        return sendJsonString(reply, 'OK', 201);
      },
    );
  }

  // Spec endpoint 2.
  app.post(
    '/attestations/:org/:flow/trail/:trail/override',
    {
      config: { auth: { permission: 'evidence:write' } },
      schema: {
        operationId: 'overrideAttestation',
        summary: "Override an attestation slot's compliance, with a reason",
        tags,
        params: TrailParams,
        body: OverrideInput,
        response: { 200: OkString, ...errorResponses },
      },
    },
    async (request, reply) => {
      const ctx = evidenceContext(app, request);
      await recordAttestation(
        ctx,
        { flowName: request.params.flow, trailName: request.params.trail },
        { kind: 'override', data: request.body },
        null,
        services(),
      );
      return sendJsonString(reply, 'OK');
    },
  );

  app.post(
    '/attestations/:org/:flow/trail/:trail/:kind',
    {
      config: { auth: { permission: 'evidence:write' } },
      schema: {
        operationId: 'postUnknownAttestation',
        summary: 'Any other attestation kind: refused with the list of kinds',
        tags,
        params: TrailParams.extend({ kind: z.string().max(255) }),
        consumes: ['multipart/form-data', 'application/json'],
        body: z.unknown(),
        response: { 201: OkString, ...errorResponses },
      },
    },
    async (request) => {
      throw new BadRequestError(
        `Unknown attestation type '${request.params.kind}': use one of ${[...ATTESTATION_KINDS, 'override'].join(', ')}`,
        { 'path.kind': 'unknown attestation type' },
      );
    },
  );

  app.get(
    '/attestations/:org',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getAttestations',
        summary: 'Find attestations by id, name, flow, type, compliance and time (cursor pages)',
        tags,
        params: OrgParams,
        querystring: z.strictObject({
          attestation_id: z.string().regex(ID_PATTERN, 'must be an 8-4-4-4-8 lowercase hex id').optional(),
          name: z.string().max(255).optional(),
          name_regex: z
            .string()
            .min(1)
            .max(200)
            .describe('A regular expression (RE2 syntax) the attestation name must match')
            .optional(),
          flow: Repeated,
          /** One trail of the flow(s) named: all of a trail's attestations in one page. */
          trail: TrailName.optional(),
          type: Repeated,
          is_compliant: QueryBool.optional(),
          from_timestamp: z.coerce.number().optional(),
          to_timestamp: z.coerce.number().optional(),
          after: QueryInt(0, Number.MAX_SAFE_INTEGER).optional(),
          per_page: QueryInt(1, 100).optional().default(20),
        }),
        response: { 200: AttestationCursorPage, ...errorResponses },
      },
    },
    async (request) => {
      const ctx = evidenceContext(app, request);
      const q = request.query;
      let flowIds: string[] | undefined;
      if (q.flow.length > 0) {
        flowIds = [];
        for (const name of q.flow) {
          const flow = await flowsRepository.findByName(app.db, ctx.orgId, name);
          if (flow) flowIds.push(flow.id);
        }
      }
      const { rows, resumeAfter } = await attestationsRepository.search(
        app.db,
        ctx.orgId,
        {
          id: q.attestation_id,
          name: q.name,
          nameMatches: q.name_regex !== undefined ? namePattern(q.name_regex).test : undefined,
          flowIds,
          trailName: q.trail,
          types: q.type,
          isCompliant: q.is_compliant,
          from: q.from_timestamp !== undefined ? new Date(q.from_timestamp * 1000) : undefined,
          to: q.to_timestamp !== undefined ? new Date(q.to_timestamp * 1000) : undefined,
          afterSeq: q.after,
        },
        q.per_page,
      );
      const last = rows[rows.length - 1];
      const cursor = rows.length === q.per_page && last ? Number(last.seq) : resumeAfter;
      const next =
        cursor !== null
          ? {
              next: {
                href: `${app.config.publicUrl}/api/v2/attestations/${ctx.orgName}?${nextQuery(request.query, cursor)}`,
              },
            }
          : {};
      return { data: rows.map((r) => presentAttestation(ctx, r)), _links: next };
    },
  );

  // Spec endpoint 12.
  app.get(
    '/attestations/:org/:flow',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'listFlowAttestations',
        summary: "A flow's attestations in a time span, newest first",
        tags,
        params: FlowParams,
        querystring: z.strictObject({
          page: QueryInt(1, 100_000).optional().default(1),
          per_page: QueryInt(1, 100).optional().default(20),
          from_timestamp: z.coerce.number().optional(),
          to_timestamp: z.coerce.number().optional(),
        }),
        response: { 200: AttestationPage, ...errorResponses },
      },
    },
    async (request) => {
      const ctx = evidenceContext(app, request);
      const flow = await resolveFlow(app.db, ctx.orgId, ctx.orgName, request.params.flow);
      const q = request.query;
      const { rows, total } = await attestationsRepository.listForFlow(
        app.db,
        ctx.orgId,
        flow.id,
        {
          from: q.from_timestamp !== undefined ? new Date(q.from_timestamp * 1000) : undefined,
          to: q.to_timestamp !== undefined ? new Date(q.to_timestamp * 1000) : undefined,
        },
        paging(q.page, q.per_page),
      );
      const self = `${app.config.publicUrl}/api/v2/attestations/${ctx.orgName}/${flow.name}`;
      const pages = Math.ceil(total / q.per_page);
      return {
        data: rows.map((r) => presentAttestation(ctx, r)),
        _links: {
          self: { href: `${self}?page=${q.page}&per_page=${q.per_page}` },
          ...(q.page < pages ? { next: { href: `${self}?page=${q.page + 1}&per_page=${q.per_page}` } } : {}),
        },
        pagination: pagination(total, q.page, q.per_page),
      };
    },
  );

  app.get(
    '/attestations/:org/:flow/trail/:trail/:name',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getTrailAttestation',
        summary: 'Every report of an attestation name on a trail, newest first',
        tags,
        params: TrailParams.extend({ name: AttestationName }),
        response: { 200: z.array(Attestation), ...errorResponses },
      },
    },
    async (request) => {
      const ctx = evidenceContext(app, request);
      const flow = await resolveFlow(app.db, ctx.orgId, ctx.orgName, request.params.flow);
      const trail = await trailsRepository.find(app.db, ctx.orgId, flow.id, request.params.trail);
      if (!trail) throw trailNotFound(request.params.trail, flow.name, ctx.orgName);
      const rows = await attestationsRepository.byName(app.db, ctx.orgId, trail.id, request.params.name, {
        trailLevel: true,
      });
      return rows.map((r) => presentAttestation(ctx, r));
    },
  );

  app.get(
    '/attestations/:org/:flow/artifact/:fingerprint/:name',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getArtifactAttestation',
        summary: 'Every report of an attestation name on an artifact (its latest trail), newest first',
        tags,
        params: FlowParams.extend({ fingerprint: FingerprintParam, name: AttestationName }),
        response: { 200: z.array(Attestation), ...errorResponses },
      },
    },
    async (request) => {
      const ctx = evidenceContext(app, request);
      const flow = await resolveFlow(app.db, ctx.orgId, ctx.orgName, request.params.flow);
      const artifact = await findArtifact(ctx, flow, request.params.fingerprint);
      const rows = await attestationsRepository.byName(
        app.db,
        ctx.orgId,
        artifact.trail_id,
        request.params.name,
        {
          fingerprint: artifact.fingerprint,
        },
      );
      return rows.map((r) => presentAttestation(ctx, r));
    },
  );

  app.get(
    '/attestations/:org/:flow/trail/:trail/attestation/:attestation_id/evidence',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getAttestationEvidence',
        summary: 'Download the evidence file attached to an attestation',
        tags,
        params: TrailParams.extend({
          attestation_id: z.string().regex(ID_PATTERN, 'must be an 8-4-4-4-8 lowercase hex id'),
        }),
        response: {
          200: z
            .string()
            .meta({ description: 'The file, with its content type and a Content-Disposition filename' }),
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const ctx = evidenceContext(app, request);
      const flow = await resolveFlow(app.db, ctx.orgId, ctx.orgName, request.params.flow);
      const [att] = await attestationsRepository.findByIds(app.db, ctx.orgId, [
        request.params.attestation_id,
      ]);
      if (!att || att.flow_id !== flow.id || att.trail_name !== request.params.trail) {
        throw new NotFoundError(
          `Attestation '${request.params.attestation_id}' does not exist in trail '${request.params.trail}'`,
        );
      }
      const content = att.evidence_sha256
        ? await app.evidence.store.get(app.db, ctx.orgId, att.evidence_sha256)
        : undefined;
      if (!content) throw new NotFoundError(`Attestation '${att.id}' has no evidence file`);
      const filename = (att.evidence_filename ?? 'evidence').replace(/["\\\r\n]/g, '_');
      return (
        reply
          .code(200)
          .header('content-type', att.evidence_content_type ?? 'application/octet-stream')
          .header(
            'content-disposition',
            `attachment; filename="${filename}"; filename*=UTF-8''${encodeURIComponent(att.evidence_filename ?? 'evidence')}`,
          )
          .header('x-content-sha256', att.evidence_sha256!)
          // The uploader chose the content type (text/html included): a browser opening the file
          // from the API's origin must neither guess another type nor run its scripts.
          .header('x-content-type-options', 'nosniff')
          .header('content-security-policy', 'sandbox')
          // A Buffer goes out as it is: fastify serialises only other payloads.
          .send(content as unknown as string)
      );
    },
  );
};

/** Compiles `name_regex` with RE2 semantics; a pattern RE2 cannot run is a 400 naming the field. */
function namePattern(source: string) {
  try {
    return compileUserPattern(source);
  } catch (err) {
    if (!(err instanceof UserPatternError)) throw err;
    throw new BadRequestError(`Invalid name_regex '${source}': ${err.message}`, {
      'query.name_regex': 'is not a valid regular expression',
    });
  }
}

function nextQuery(query: Record<string, unknown>, after: number): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (k === 'after' || v === undefined) continue;
    for (const item of Array.isArray(v) ? v : [v]) params.append(k, String(item));
  }
  params.set('after', String(after));
  return params.toString();
}

export default routes;
