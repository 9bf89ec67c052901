/** Makes the database, its dialect, the config and the clock available to every route. */
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import type { DatabaseHandle, DialectName } from '../storage/create-db.js';
import type { Db } from '../storage/database.js';

declare module 'fastify' {
  interface FastifyInstance {
    db: Db;
    dialect: DialectName;
    config: Config;
    /** The current time; tests substitute their own clock. */
    clock: () => Date;
  }
}

export interface DbPluginOptions {
  handle: DatabaseHandle;
  /** Close the handle with the app (true when the app opened it). */
  owned: boolean;
  config: Config;
  clock: () => Date;
}

export default fp<DbPluginOptions>(
  (app, opts, done) => {
    app.decorate('db', opts.handle.db);
    app.decorate('dialect', opts.handle.dialect);
    app.decorate('config', opts.config);
    app.decorate('clock', opts.clock);
    if (opts.owned) {
      app.addHook('onClose', async () => opts.handle.close());
    }
    done();
  },
  { name: 'db' },
);
