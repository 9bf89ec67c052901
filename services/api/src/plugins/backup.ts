/** The embedded database's consistent dump, for the admin backup route (absent on PostgreSQL). */
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyInstance {
    backup: { dump: (() => Promise<Blob>) | undefined };
  }
}

export interface BackupPluginOptions {
  dump: (() => Promise<Blob>) | undefined;
}

export default fp<BackupPluginOptions>(
  (app, opts, done) => {
    app.decorate('backup', { dump: opts.dump });
    done();
  },
  { name: 'backup' },
);
