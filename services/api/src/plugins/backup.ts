/** The embedded database's consistent dump, for the admin backup route (absent on PostgreSQL). */
import type { Readable } from 'node:stream';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyInstance {
    backup: { dump: (() => Promise<Readable>) | undefined };
  }
}

export interface BackupPluginOptions {
  dump: (() => Promise<Readable>) | undefined;
}

export default fp<BackupPluginOptions>(
  (app, opts, done) => {
    app.decorate('backup', { dump: opts.dump });
    done();
  },
  { name: 'backup' },
);
