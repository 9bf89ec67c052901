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
  OrgParams,
  QueryBool,
  QueryInt,
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
import { BadRequestError } from '../../errors.js';
import { readMultipartForm } from '../../plugins/multipart.js';
import {
  artifactAttestationsNamed,
  attestationEvidence,
  findAttestations,
  listFlowAttestations,
  trailAttestationsNamed,
} from '../../usecases/evidence/attestation-reads.js';
import { recordAttestation } from '../../usecases/evidence/attestations.js';
import { FingerprintParam, FlowParams, Repeated, TrailParams } from '../params.js';
import { pagination } from '../paging.js';
import { orgScope, parseJsonPart } from '../request-context.js';
import { attachmentDisposition, sendJsonString, sendOk } from '../reply.js';
import type { OrgScope } from '../../usecases/scope/org-scope.js';
import { blobOfBuffer, blobOfFile } from '../../usecases/evidence/evidence-store.js';

const tags = ['attestations'];

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
        const scope = orgScope(app, request);
        const parts = await readMultipartForm(request, {
          allowed: ['data_json', 'attachment_file'],
          bytes: ['attachment_file'],
          required: ['data_json'],
          maxFileBytes: app.config.evidenceMaxBytes,
        });
        const data = parseJsonPart(parts.get('data_json'), 'data_json', ATTESTATION_INPUTS[kind]);
        const file = parts.get('attachment_file');
        await recordAttestation(
          scope,
          { flowName: request.params.flow, trailName: request.params.trail },
          { kind, data } as Parameters<typeof recordAttestation>[2],
          file?.spooled
            ? {
                filename: file.filename ?? 'evidence',
                blob:
                  file.spooled.path === null
                    ? blobOfBuffer(file.spooled.data ?? Buffer.alloc(0), file.sha256)
                    : blobOfFile(file.spooled.path, file.sha256, file.spooled.size),
                sha256: file.sha256,
                mimetype: file.mimetype,
                head: file.spooled.head,
              }
            : null,
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
      const scope = orgScope(app, request);
      await recordAttestation(
        scope,
        { flowName: request.params.flow, trailName: request.params.trail },
        { kind: 'override', data: request.body },
        null,
      );
      return sendOk(reply);
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
    async (request) => findAttestations(orgScope(app, request), request.query),
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
      const q = request.query;
      const page = await listFlowAttestations(orgScope(app, request), request.params.flow, q);
      return {
        data: page.data,
        _links: { self: { href: page.self }, ...(page.next ? { next: { href: page.next } } : {}) },
        pagination: pagination(page.total, q.page, q.per_page),
      };
    },
  );

  /** A read route listing every report of the attestation name in its path, newest first. */
  const namedAttestationsRoute = <P extends z.ZodObject<{ name: typeof AttestationName }>>(
    path: string,
    operationId: string,
    summary: string,
    params: P,
    read: (scope: OrgScope, params: z.infer<P>) => Promise<Attestation[]>,
  ) =>
    app.get(
      path,
      {
        config: { auth: { permission: 'read' } },
        schema: {
          operationId,
          summary,
          tags,
          params,
          response: { 200: z.array(Attestation), ...errorResponses },
        },
      },
      async (request) => read(orgScope(app, request), request.params as z.infer<P>),
    );

  namedAttestationsRoute(
    '/attestations/:org/:flow/trail/:trail/:name',
    'getTrailAttestation',
    'Every report of an attestation name on a trail, newest first',
    TrailParams.extend({ name: AttestationName }),
    (scope, params) => trailAttestationsNamed(scope, params, params.name),
  );
  namedAttestationsRoute(
    '/attestations/:org/:flow/artifact/:fingerprint/:name',
    'getArtifactAttestation',
    'Every report of an attestation name on an artifact (its latest trail), newest first',
    FlowParams.extend({ fingerprint: FingerprintParam, name: AttestationName }),
    (scope, params) => artifactAttestationsNamed(scope, params, params.name),
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
      const { attestation: att, file } = await attestationEvidence(orgScope(app, request), {
        ...request.params,
        id: request.params.attestation_id,
      });
      return (
        reply
          .code(200)
          .header('content-type', att.evidence_content_type ?? 'application/octet-stream')
          .header('content-disposition', attachmentDisposition(att.evidence_filename ?? 'evidence'))
          .header('x-content-sha256', att.evidence_sha256!)
          .header('content-length', String(file.size))
          // The uploader chose the content type (text/html included): a browser opening the file
          // from the API's origin must neither guess another type nor run its scripts.
          .header('x-content-type-options', 'nosniff')
          .header('content-security-policy', 'sandbox')
          // Streamed from the store; bytes that no longer match the digest end the response early
          // (before its last chunk), so a client never takes a changed file for a whole one.
          .send(file.stream as unknown as string)
      );
    },
  );
};

export default routes;
