/**
 * The kysely Database type: one interface per area, joined here.
 * Each area keeps its tables in `tables/<area>.ts`.
 */
import type { Kysely } from 'kysely';
import type { EvaluationTables } from './tables/evaluations.js';
import type { EvidenceTables } from './tables/evidence.js';
import type { IdentityTables } from './tables/identity.js';
import type { PeopleTables } from './tables/people.js';
import type { NotificationConfigTables } from './tables/notification-config.js';
import type { InsightTables } from './tables/insight.js';
import type { RetentionTables } from './tables/retention.js';
import type { RuntimeTables } from './tables/runtime.js';
import type { SbomTables } from './tables/sbom.js';
import type { TransparencyLogTables } from './tables/transparency-log.js';

export type { EvidenceTables } from './tables/evidence.js';
export type { IdentityTables } from './tables/identity.js';
export type { RuntimeTables } from './tables/runtime.js';

export type Database = IdentityTables &
  PeopleTables &
  EvidenceTables &
  RuntimeTables &
  SbomTables &
  NotificationConfigTables &
  EvaluationTables &
  InsightTables &
  RetentionTables &
  TransparencyLogTables;

/** The database handle every repository takes; a transaction is one too. */
export type Db = Kysely<Database>;
