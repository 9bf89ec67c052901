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
import oidcTrusts from './oidc-trusts/index.js';
import trails from './trails/index.js';
import actions from './actions/index.js';
import notificationConfig from './notification-config/index.js';
import allowlists from './allowlists/index.js';
import environments from './environments/index.js';
import policies from './policies/index.js';
import snapshots from './snapshots/index.js';
import exposure from './exposure/index.js';
import insight from './insight/index.js';
import admin from './admin/index.js';
import people from './people/index.js';
import evaluations from './evaluations/index.js';
import policyPreview from './policy-preview/index.js';
import retention from './retention/index.js';
import log from './log/index.js';

const routes: FastifyPluginAsync = async (app) => {
  await app.register(organizations);
  await app.register(serviceAccounts);
  await app.register(oidcTrusts);
  await app.register(flows);
  await app.register(trails);
  await app.register(artifacts);
  await app.register(attestations);
  await app.register(attestationTypes);
  await app.register(controls);
  await app.register(repos);
  await app.register(search);
  await app.register(audit);
  await app.register(environments);
  await app.register(snapshots);
  await app.register(policies);
  await app.register(allowlists);
  await app.register(actions);
  await app.register(notificationConfig);
  await app.register(exposure);
  await app.register(insight);
  await app.register(admin);
  await app.register(people);
  await app.register(evaluations);
  await app.register(policyPreview);
  await app.register(retention);
  await app.register(log);
};

export default routes;
