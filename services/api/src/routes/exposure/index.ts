/** Exposure: which artifacts held a package, fingerprint or commit, and where and when they ran. */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { OrgParams, errorResponses } from '../../../../shared/contract/common.js';
import { ExposureQuery, ExposureResult } from '../../../../shared/contract/exposure.js';
import { BadRequestError } from '../../errors.js';
import { orgScope } from '../request-context.js';
import { EXPOSURE_PER_PAGE, exposure, type ExposureSelector } from '../../usecases/evidence/exposure.js';

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/exposure/:org',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'exposure',
        summary:
          'Which artifacts contained a package (purl, from indexed SBOMs), or have a fingerprint or commit, and where and when they ran',
        tags: ['exposure'],
        params: OrgParams,
        querystring: ExposureQuery,
        response: { 200: ExposureResult, ...errorResponses },
      },
    },
    async (request) => {
      const q = request.query;
      const given = (['purl', 'fingerprint', 'commit'] as const).filter((k) => q[k] !== undefined);
      if (given.length !== 1) {
        throw new BadRequestError('Give exactly one of purl, fingerprint or commit', {
          [`query.${given[1] ?? 'purl'}`]:
            given.length === 0
              ? 'one of purl, fingerprint or commit is required'
              : `not together with ${given[0]}`,
        });
      }
      const selector: ExposureSelector =
        q.purl !== undefined
          ? { purl: q.purl }
          : q.fingerprint !== undefined
            ? { fingerprint: q.fingerprint }
            : { commit: q.commit! };
      return exposure(orgScope(app, request), {
        selector,
        from: q.from,
        to: q.to,
        limit: q.limit ?? EXPOSURE_PER_PAGE,
        page: q.page,
        perPage: q.per_page ?? q.limit ?? EXPOSURE_PER_PAGE,
      });
    },
  );
};

export default routes;
