/**
 * Environment reports (reference/cli-requests.md 3.6; spec endpoint 3, rules 2-4): one route per
 * report type, one ingestion path. The body's bytes are hashed (plugins/report-body-hash.ts) so a
 * report identical to the last one is recognised before it is parsed; the body is validated in
 * the use case, after that check.
 */
import type { FastifyPluginAsync, FastifySchemaCompiler } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { OkString, errorResponses } from '../../../../shared/contract/common.js';
import { REPORT_SCHEMAS, type ReportType } from '../../../../shared/contract/environment-reports.js';
import { RequestValidationError } from '../../errors.js';
import reportBodyHash from '../../plugins/report-body-hash.js';
import { receiveReport } from '../../usecases/runtime/report-receive.js';
import { sendJsonString } from '../reply.js';
import { EnvParams } from '../params.js';
import { orgScope } from '../request-context.js';

const tags = ['environments'];

/** Reports validate their body in the handler, after the same-bytes check; the rest as usual. */
const reportValidator: FastifySchemaCompiler<z.ZodType> =
  ({ schema, httpPart }) =>
  (data) => {
    if (httpPart === 'body') {
      return { value: data as unknown };
    }
    const result = schema.safeParse(data);
    return result.success
      ? { value: result.data }
      : { error: new RequestValidationError(result.error.issues) };
  };

const reports: FastifyPluginAsync = async (fastify) => {
  await fastify.register(reportBodyHash);
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  for (const [type, schema] of Object.entries(REPORT_SCHEMAS) as Array<
    [ReportType, (typeof REPORT_SCHEMAS)[ReportType]]
  >) {
    app.put(
      `/environments/:org/:env_name/report/${type}`,
      {
        config: { auth: { permission: 'snapshot:report' } },
        validatorCompiler: reportValidator as never,
        schema: {
          operationId: `report${type.replace(/(^|-)([a-zA-Z0-9])/g, (_m, _d, c: string) => c.toUpperCase())}`,
          summary: `Report what runs in a ${type} environment (the full current state)`,
          tags,
          params: EnvParams,
          body: schema,
          response: { 200: OkString, ...errorResponses },
        },
      },
      async (request, reply) => {
        const rawHash = request.rawBodySha256;
        const snapshot = await receiveReport(orgScope(app, request), {
          envName: request.params.env_name,
          type,
          body: request.body,
          ...(rawHash ? { rawHash } : {}),
        });
        return sendJsonString(
          reply,
          snapshot ? `Snapshot #${snapshot.index} created` : 'No new snapshots to create',
        );
      },
    );
  }
};

export default reports;
