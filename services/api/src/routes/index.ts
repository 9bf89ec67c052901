/**
 * Every resource's routes, mounted under /api/v2. One encapsulated plugin per resource;
 * each issue adds its line here.
 */
import type { FastifyPluginAsync } from 'fastify';
import organizations from './organizations/index.js';
import serviceAccounts from './service-accounts/index.js';

const routes: FastifyPluginAsync = async (app) => {
  await app.register(organizations);
  await app.register(serviceAccounts);
};

export default routes;
