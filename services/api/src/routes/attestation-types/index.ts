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
import {
  archiveAttestationType,
  createAttestationType,
  listAttestationTypes,
  readAttestationType,
} from '../../usecases/evidence/attestation-types.js';
import { orgScope, parseJsonPart } from '../request-context.js';
import { sendJsonString, sendOk } from '../reply.js';
import { NoBody } from '../request-schemas.js';

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
      const ctx = orgScope(app, request);
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
      await createAttestationType(ctx, input, schema);
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
      return listAttestationTypes(orgScope(app, request));
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
      return readAttestationType(orgScope(app, request), request.params.name, request.query.version);
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
      await archiveAttestationType(orgScope(app, request), request.params.name);
      return sendOk(reply);
    },
  );
};

export default routes;
