/** Audit packages of artifacts (spec endpoint 17) and trails: streamed .tar.gz files. */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { OrgName, ResourceName, errorResponses } from '../../../../shared/contract/common.js';
import { TrailName } from '../../../../shared/contract/evidence-common.js';
import { trailsRepository } from '../../storage/repositories/trails.js';
import { findArtifact } from '../../usecases/artifacts.js';
import { artifactAuditPackage, trailAuditPackage } from '../../usecases/audit-package.js';
import { resolveFlow } from '../../usecases/flows.js';
import { trailNotFound } from '../../usecases/trails.js';
import { evidenceContext, FingerprintParam } from '../evidence-shared.js';

const tags = ['audit'];
const File = z.string().meta({
  description: 'A .tar.gz with the record, compliance, attestations, evidence files and MANIFEST.sha256',
});

function sendArchive(reply: FastifyReply, stream: Readable, name: string): FastifyReply {
  return reply
    .code(200)
    .header('content-type', 'application/gzip')
    .header('content-disposition', `attachment; filename="${name.replace(/[^A-Za-z0-9._-]/g, '_')}"`)
    .send(stream);
}

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  // Spec endpoint 17.
  app.get(
    '/artifacts/:org/:flow/:fingerprint/audit_package',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getArtifactAuditPackage',
        summary: 'Download the audit package of an artifact (.tar.gz)',
        tags,
        params: z.strictObject({ org: OrgName, flow: ResourceName, fingerprint: FingerprintParam }),
        response: { 200: File, ...errorResponses },
      },
    },
    async (request, reply) => {
      const ctx = evidenceContext(app, request);
      const flow = await resolveFlow(app.db, ctx.orgId, ctx.orgName, request.params.flow);
      const artifact = await findArtifact(ctx, flow, request.params.fingerprint);
      const stream = await artifactAuditPackage(ctx, app.evidence.store, artifact);
      return sendArchive(
        reply,
        stream,
        `${flow.name}-${artifact.fingerprint.slice(0, 12)}-audit-package.tar.gz`,
      );
    },
  );

  app.get(
    '/trails/:org/:flow/:trail/audit_package',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getTrailAuditPackage',
        summary: 'Download the audit package of a trail (.tar.gz)',
        tags,
        params: z.strictObject({ org: OrgName, flow: ResourceName, trail: TrailName }),
        response: { 200: File, ...errorResponses },
      },
    },
    async (request, reply) => {
      const ctx = evidenceContext(app, request);
      const flow = await resolveFlow(app.db, ctx.orgId, ctx.orgName, request.params.flow);
      const trail = await trailsRepository.find(app.db, ctx.orgId, flow.id, request.params.trail);
      if (!trail) throw trailNotFound(request.params.trail, flow.name, ctx.orgName);
      const stream = await trailAuditPackage(ctx, app.evidence.store, flow, trail);
      return sendArchive(reply, stream, `${flow.name}-${trail.name}-audit-package.tar.gz`);
    },
  );
};

export default routes;
