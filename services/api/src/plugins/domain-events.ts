/** The app's domain event bus (see usecases/scope/domain-events.ts). */
import fp from 'fastify-plugin';
import { DomainEventBus } from '../usecases/scope/domain-events.js';

declare module 'fastify' {
  interface FastifyInstance {
    domainEvents: DomainEventBus;
  }
}

export default fp(
  (app, _opts, done) => {
    app.decorate('domainEvents', new DomainEventBus());
    done();
  },
  { name: 'domain-events' },
);
