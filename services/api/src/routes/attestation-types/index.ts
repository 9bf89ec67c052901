/** Custom attestation types (spec endpoint 18; reference/cli-requests.md 3.8). */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  OkString,
  OrgName,
  OrgParams,
  QueryInt,
  errorResponses,
} from '../../../../shared/contract/common.js';
import {
  AttestationType,
  AttestationTypeForm,
  CreateAttestationType,
} from '../../../../shared/contract/attestation-types.js';
import { ValidationError } from '../../errors.js';
import { readMultipartForm } from '../../plugins/multipart.js';
import { attestationTypesRepository } from '../../storage/repositories/attestation-types.js';
import {
  checkDefinition,
  getAttestationType,
  presentAttestationType,
  saveAttestationType,
} from '../../usecases/attestation-types.js';
import { inTransaction } from '../../usecases/evidence-context.js';
import { evidenceContext, parseJsonPart } from '../evidence-shared.js';
import { NoBody, sendJsonString } from '../schemas.js';

const tags = ['custom attestation types'];
const TypeParams = z.strictObject({ org: OrgName, name: z.string().min(1).max(255) });
/** The largest JSON Schema a type may carry. */
const MAX_SCHEMA_BYTES = 256 * 1024;

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/custom-attestation-types/:org',
    {
      config: { auth: { permission: 'attestation-type:write' } },
      schema: {
        operationId: 'createCustomAttestationType',
        summary:
          'Create a custom attestation type, or a new version of it (multipart: data_json, type_schema)',
        tags,
        params: OrgParams,
        consumes: ['multipart/form-data'],
        body: AttestationTypeForm.nullable().optional(),
        response: { 201: OkString, ...errorResponses },
      },
    },
    async (request, reply) => {
      const ctx = evidenceContext(app, request);
      const parts = await readMultipartForm(request, {
        allowed: ['data_json', 'type_schema'],
        required: ['data_json'],
        maxFileBytes: MAX_SCHEMA_BYTES,
      });
      const input = parseJsonPart(parts.get('data_json'), 'data_json', CreateAttestationType);
      let schema: Record<string, unknown> | null = null;
      const schemaPart = parts.get('type_schema');
      if (schemaPart) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(schemaPart.data.toString('utf8'));
        } catch (err) {
          throw new ValidationError({ type_schema: `must be JSON: ${(err as Error).message}` });
        }
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
          throw new ValidationError({ type_schema: 'must be a JSON Schema object' });
        }
        schema = parsed as Record<string, unknown>;
      }
      await checkDefinition(app.evidence.evaluator, ctx.orgId, input, schema);
      await app.db
        .transaction()
        .execute((trx) => saveAttestationType(inTransaction(ctx, trx), input, schema));
      // Every accepted POST creates something: the type, or a new version of it. Clients rely on
      // 201 for both (the Terraform provider accepts nothing else); the CLI accepts any 2xx.
      return sendJsonString(reply, 'OK', 201);
    },
  );

  app.get(
    '/custom-attestation-types/:org',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'listCustomAttestationTypes',
        summary: 'List custom attestation types with their versions, newest first',
        tags,
        params: OrgParams,
        response: { 200: z.array(AttestationType), ...errorResponses },
      },
    },
    async (request) => {
      const ctx = evidenceContext(app, request);
      const types = await attestationTypesRepository.list(app.db, ctx.orgId);
      const versions = await attestationTypesRepository.versions(
        app.db,
        ctx.orgId,
        types.map((t) => t.id),
      );
      return types.map((t) =>
        presentAttestationType(
          t,
          versions.filter((v) => v.type_id === t.id),
          ctx.orgName,
        ),
      );
    },
  );

  // Spec endpoint 18.
  app.get(
    '/custom-attestation-types/:org/:name',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getCustomAttestationType',
        summary: 'Get a custom attestation type (versions newest first), or one version with ?version=',
        tags,
        params: TypeParams,
        querystring: z.strictObject({ version: QueryInt(1, 1_000_000).optional() }),
        response: { 200: AttestationType, ...errorResponses },
      },
    },
    async (request) => {
      const ctx = evidenceContext(app, request);
      const type = await getAttestationType(app.db, ctx.orgId, ctx.orgName, request.params.name);
      const versions = await attestationTypesRepository.versions(app.db, ctx.orgId, [type.id]);
      return presentAttestationType(type, versions, ctx.orgName, request.query.version);
    },
  );

  app.put(
    '/custom-attestation-types/:org/:name/archive',
    {
      config: { auth: { permission: 'attestation-type:write' } },
      schema: {
        operationId: 'archiveCustomAttestationType',
        summary: 'Archive a custom attestation type: no new attestations of it',
        tags,
        params: TypeParams,
        body: NoBody,
        response: { 200: OkString, ...errorResponses },
      },
    },
    async (request, reply) => {
      const ctx = evidenceContext(app, request);
      const type = await getAttestationType(app.db, ctx.orgId, ctx.orgName, request.params.name);
      await attestationTypesRepository.touch(app.db, ctx.orgId, type.id, {
        archived: true,
        last_modified_at: ctx.now,
      });
      return sendJsonString(reply, 'OK');
    },
  );
};

export default routes;
