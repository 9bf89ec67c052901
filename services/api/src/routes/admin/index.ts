/** Installation administration: a consistent backup of the embedded database while it runs. */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorBody, errorResponses } from '../../../../shared/contract/common.js';
import { requirePrincipal } from '../../plugins/auth.js';
import { assertMayBackUp, backupStream } from '../../usecases/access/backup.js';

const Backup = z.string().meta({
  description:
    'A tar of the embedded database directory, consistent at the moment the request was served; restore it with `npm run admin -- restore FILE`',
});

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/admin/backup',
    {
      config: { auth: { permission: 'authenticated' } },
      schema: {
        operationId: 'getBackup',
        summary:
          'Download a backup of the embedded database (admins of VERITY_BACKUP_ORG; 501 on PostgreSQL)',
        tags: ['admin'],
        response: { 200: Backup, ...errorResponses, 501: ErrorBody },
      },
    },
    async (request, reply) => {
      await assertMayBackUp(app.db, requirePrincipal(request), app.config.backupOrg);
      const stream = await backupStream(app.backup.dump);
      const stamp = app.clock().toISOString().replace(/[:.]/g, '-');
      request.log.info({ principal: requirePrincipal(request).name }, 'backup taken');
      // A stream, not the JSON the schema's serializer writes: sent through the untyped reply.
      return (reply as FastifyReply)
        .code(200)
        .header('content-type', 'application/x-tar')
        .header('content-disposition', `attachment; filename="verity-backup-${stamp}.tar"`)
        .send(stream);
    },
  );
};

export default routes;
