/**
 * buildApp: the whole API as a fastify instance that never listens. main.ts listens;
 * tests call `inject`.
 */
import Fastify, {
  type FastifyInstance,
  type FastifySchemaCompiler,
  type FastifyServerOptions,
} from 'fastify';
import { serializerCompiler } from 'fastify-type-provider-zod';
import type { ZodType } from 'zod';
import type { Config } from './config.js';
import { RequestValidationError } from './errors.js';
import { loggerOptions } from './logger.js';
import auditPlugin from './plugins/audit.js';
import authPlugin from './plugins/auth.js';
import backupPlugin from './plugins/backup.js';
import cachesPlugin from './plugins/caches.js';
import mcpPlugin from './plugins/mcp.js';
import consolePlugin from './plugins/console.js';
import dbPlugin from './plugins/db.js';
import statisticsPlugin from './plugins/statistics.js';
import domainEventsPlugin from './plugins/domain-events.js';
import errorsPlugin from './plugins/errors.js';
import servicesPlugin from './plugins/services.js';
import healthPlugin from './plugins/health.js';
import metricsPlugin from './plugins/metrics.js';
import multipartPlugin from './plugins/multipart.js';
import oidcFederationPlugin from './plugins/oidc-federation.js';
import openapiPlugin from './plugins/openapi.js';
import peoplePlugin, { peopleRoutes } from './plugins/people.js';
import provenancePlugin from './plugins/provenance.js';
import rateLimitPlugin from './plugins/rate-limit.js';
import requestTextPlugin from './plugins/request-text.js';
import runtimeMetricsPlugin from './plugins/runtime-metrics.js';
import runtimePlugin from './plugins/runtime.js';
import evaluationsPlugin from './plugins/evaluations.js';
import transparencyLogPlugin from './plugins/transparency-log.js';
import routes from './routes/index.js';
import { openDatabase, type DatabaseHandle } from './storage/create-db.js';
import { fastifyTrustProxy } from './trust-proxy.js';
import { evidenceProvenance } from './usecases/evidence/evidence-provenance.js';
import type { ProvenancePort } from './usecases/scope/provenance.js';

export interface BuildAppOptions {
  config: Config;
  /** An open, migrated database; when absent the app opens (and closes) its own from config. */
  database?: DatabaseHandle;
  clock?: () => Date;
  logger?: FastifyServerOptions['logger'];
  /** The port to the evidence; tests pass their own, the evidence area its real one. */
  provenance?: ProvenancePort;
  /** The built console's folder; defaults to `services/console/dist`. */
  consoleDir?: string;
}

/** zod validation that keeps the issues, so the error plugin can name every field. */
const validatorCompiler: FastifySchemaCompiler<ZodType> =
  ({ schema }) =>
  (data) => {
    const result = schema.safeParse(data);
    return result.success
      ? { value: result.data }
      : { error: new RequestValidationError(result.error.issues) };
  };

/** The database of the configuration: PostgreSQL at DATABASE_URL, else embedded in the data directory. */
export function openConfiguredDatabase(config: Config): Promise<DatabaseHandle> {
  return openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolMax: config.dbPoolMax,
    preparedStatements: config.dbPreparedStatements,
    statementTimeoutMs: config.dbStatementTimeoutMs,
    connectTimeoutMs: config.dbConnectTimeoutMs,
  });
}

/** Builds the API. The caller owns `listen`/`close`. */
export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const owned = options.database === undefined;
  const handle = options.database ?? (await openConfiguredDatabase(config));

  const app = Fastify({
    logger: options.logger ?? loggerOptions(config.logLevel),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: fastifyTrustProxy(config.trustProxy),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1000 },
    return503OnClosing: true,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  // The CLI sends `null` (or nothing) with Content-Type application/json on writes without a payload.
  const defaultJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (typeof body === 'string' && body.trim() === '') {
      done(null, null);
      return;
    }
    void defaultJson(request, typeof body === 'string' ? body : body.toString('utf8'), done);
  });

  await app.register(dbPlugin, { handle, owned, config, clock: options.clock ?? (() => new Date()) });
  await app.register(statisticsPlugin);
  await app.register(cachesPlugin, {
    handle,
    changePollMs: config.changePollMs,
    readCacheEntries: config.readCacheEntries,
    readCacheBytes: config.readCacheBytes,
  });
  await app.register(domainEventsPlugin);
  // The runtime asks the evidence where running fingerprints came from through this port;
  // tests may put their own in its place.
  await app.register(provenancePlugin, { port: options.provenance ?? evidenceProvenance(config.publicUrl) });
  await app.register(errorsPlugin);
  await app.register(servicesPlugin);
  await app.register(metricsPlugin);
  await app.register(runtimePlugin);
  await app.register(evaluationsPlugin);
  await app.register(transparencyLogPlugin);
  await app.register(runtimeMetricsPlugin);
  await app.register(openapiPlugin);
  await app.register(peoplePlugin);
  await app.register(oidcFederationPlugin);
  await app.register(authPlugin);
  await app.register(auditPlugin);
  await app.register(rateLimitPlugin);
  await app.register(requestTextPlugin);
  await app.register(multipartPlugin);
  await app.register(peopleRoutes);
  await app.register(healthPlugin);
  await app.register(backupPlugin, { dump: handle.dump });
  await app.register(routes, { prefix: '/api/v2' });
  await app.register(mcpPlugin);
  await app.register(consolePlugin, { root: options.consoleDir });
  return app;
}
