/** The wire contract: one zod schema per shape, shared by the API, its OpenAPI document and the client. */
export * from './common.js';
export * from './organizations.js';
export * from './service-accounts.js';
export * from './environment-reports.js';
export * from './environments.js';
export * from './snapshots.js';
export * from './policies.js';
export * from './allowlists.js';
export * from './actions.js';
