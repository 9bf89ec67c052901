/**
 * The trail aggregate's store: a trail with its flow, artifacts, attestations, facts and trail
 * events, read with its row versions (`read.ts`) and written in one statement (`write.ts`).
 * Attestations are stored only through `insertAttestationBatch`, by the batcher (conditioned on
 * the versions it read) and under the trail's lock alike.
 */
import { trailReads } from './read.js';
import { trailWrites } from './write.js';

export const trailStore = { ...trailReads, ...trailWrites };

export type * from './types.js';
