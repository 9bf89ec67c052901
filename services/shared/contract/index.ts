/** The wire contract: one zod schema per shape, shared by the API, its OpenAPI document and the client. */
export * from './common.js';
export * from './organizations.js';
export * from './service-accounts.js';
export * from './environment-reports.js';
export * from './evidence-common.js';
export * from './flows.js';
export * from './trails.js';
export * from './artifacts.js';
export * from './attestations.js';
export * from './attestation-types.js';
export * from './controls.js';
export * from './repos.js';
export * from './search.js';
