/**
 * Every resource's routes, mounted under /api/v2. One encapsulated plugin per resource;
 * each issue adds its line here.
 */
import type { FastifyPluginAsync } from 'fastify';
import organizations from './organizations/index.js';
import serviceAccounts from './service-accounts/index.js';
import actions from './actions/index.js';
import allowlists from './allowlists/index.js';
import environments from './environments/index.js';
import policies from './policies/index.js';
import snapshots from './snapshots/index.js';

const routes: FastifyPluginAsync = async (app) => {
  await app.register(organizations);
  await app.register(serviceAccounts);
  await app.register(environments);
  await app.register(snapshots);
  await app.register(policies);
  await app.register(allowlists);
  await app.register(actions);
};

export default routes;
