/**
 * Every resource's routes, mounted under /api/v2. One encapsulated plugin per resource;
 * each issue adds its line here.
 */
import type { FastifyPluginAsync } from 'fastify';
import artifacts from './artifacts/index.js';
import attestationTypes from './attestation-types/index.js';
import attestations from './attestations/index.js';
import audit from './audit/index.js';
import controls from './controls/index.js';
import flows from './flows/index.js';
import organizations from './organizations/index.js';
import repos from './repos/index.js';
import search from './search/index.js';
import serviceAccounts from './service-accounts/index.js';
import trails from './trails/index.js';

const routes: FastifyPluginAsync = async (app) => {
  await app.register(organizations);
  await app.register(serviceAccounts);
  await app.register(flows);
  await app.register(trails);
  await app.register(artifacts);
  await app.register(attestations);
  await app.register(attestationTypes);
  await app.register(controls);
  await app.register(repos);
  await app.register(search);
  await app.register(audit);
};

export default routes;
