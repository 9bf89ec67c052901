/**
 * The kysely Database type: one interface per area, joined here.
 * Each area keeps its tables in `tables/<area>.ts`.
 */
import type { Kysely } from 'kysely';
import type { IdentityTables } from './tables/identity.js';
import type { RuntimeTables } from './tables/runtime.js';

export type { IdentityTables } from './tables/identity.js';
export type { RuntimeTables } from './tables/runtime.js';

export type Database = IdentityTables & RuntimeTables;

/** The database handle every repository takes; a transaction is one too. */
export type Db = Kysely<Database>;
