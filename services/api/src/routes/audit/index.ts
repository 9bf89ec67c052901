/** Audit packages of artifacts (spec endpoint 17), trails and snapshots: streamed .tar.gz files. */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OrgName, ResourceName, errorResponses } from '../../../../shared/contract/common.js';
import { TrailName } from '../../../../shared/contract/evidence-common.js';
import {
  namedArtifactAuditPackage,
  namedTrailAuditPackage,
  type AuditPackage,
} from '../../usecases/evidence/audit-package.js';
import { snapshotAuditPackage } from '../../usecases/runtime/snapshot-audit-package.js';
import { EnvParams, FingerprintParam } from '../params.js';
import { orgScope } from '../request-context.js';

const tags = ['audit'];
const File = z.string().meta({
  description: 'A .tar.gz with the record, compliance, attestations, evidence files and MANIFEST.sha256',
});

function sendArchive(reply: FastifyReply, { stream, fileName }: AuditPackage): FastifyReply {
  return reply
    .code(200)
    .header('content-type', 'application/gzip')
    .header('content-disposition', `attachment; filename="${fileName.replace(/[^A-Za-z0-9._-]/g, '_')}"`)
    .send(stream);
}

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  /** A read route that streams the audit package `load` builds from its path params. */
  const auditPackageRoute = <P extends z.ZodObject>(
    path: string,
    operationId: string,
    summary: string,
    params: P,
    load: (ctx: ReturnType<typeof orgScope>, params: z.infer<P>) => Promise<AuditPackage>,
  ) =>
    app.get(
      path,
      {
        config: { auth: { permission: 'read' } },
        schema: { operationId, summary, tags, params, response: { 200: File, ...errorResponses } },
      },
      async (request, reply) =>
        sendArchive(reply, await load(orgScope(app, request), request.params as z.infer<P>)),
    );

  // Spec endpoint 17.
  auditPackageRoute(
    '/artifacts/:org/:flow/:fingerprint/audit_package',
    'getArtifactAuditPackage',
    'Download the audit package of an artifact (.tar.gz)',
    z.strictObject({ org: OrgName, flow: ResourceName, fingerprint: FingerprintParam }),
    (ctx, params) => namedArtifactAuditPackage(ctx, params.flow, params.fingerprint),
  );
  auditPackageRoute(
    '/trails/:org/:flow/:trail/audit_package',
    'getTrailAuditPackage',
    'Download the audit package of a trail (.tar.gz)',
    z.strictObject({ org: OrgName, flow: ResourceName, trail: TrailName }),
    (ctx, params) => namedTrailAuditPackage(ctx, params.flow, params.trail),
  );
  auditPackageRoute(
    '/snapshots/:org/:env_name/:snapshot_expression/audit_package',
    'getSnapshotAuditPackage',
    'Download the audit package of an environment at a snapshot (.tar.gz): every running artifact with its trail, evidence files and policy decisions',
    EnvParams.extend({ snapshot_expression: z.string().min(1).max(100) }),
    (ctx, params) => snapshotAuditPackage(ctx, params.env_name, params.snapshot_expression),
  );
};

export default routes;
