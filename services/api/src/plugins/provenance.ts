/** Makes the provenance port (usecases/scope/provenance.ts) available as `app.provenance`. */
import fp from 'fastify-plugin';
import type { ProvenancePort } from '../usecases/scope/provenance.js';

declare module 'fastify' {
  interface FastifyInstance {
    provenance: ProvenancePort;
  }
}

export default fp<{ port: ProvenancePort }>(
  (app, opts, done) => {
    app.decorate('provenance', opts.port);
    done();
  },
  { name: 'provenance' },
);
