/** Makes the provenance port (usecases/provenance.ts) available as `app.provenance`. */
import fp from 'fastify-plugin';
import type { ProvenancePort } from '../usecases/provenance.js';

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
