/**
 * The transparency log's background work (`app.transparencyLog`): the sequencer, which every
 * `VERITY_LOG_SEQUENCE_MS` integrates the records the triggers queued and signs each
 * organization's new checkpoint (several replicas take turns on the organization's head row), and
 * the self-check, which every `VERITY_LOG_SELF_CHECK_MS` recomputes a sample of each
 * organization's entries from the stored records and counts and logs each mismatch
 * (`verity_log_self_check_failures_total`). Off with `VERITY_TRANSPARENCY_LOG=off`.
 */
import type { FastifyInstance } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import fp from 'fastify-plugin';
import { Counter } from 'prom-client';
import { Loop } from '../notify/loop.js';
import type { DialectName } from '../storage/create-db.js';
import { transparencyLogRepository } from '../storage/repositories/transparency-log.js';
import {
  EMBEDDED_SEQUENCE_BATCH,
  leavesHere,
  LOG_KEYS,
  sequenceOrg,
  SEQUENCE_BATCH,
  type LeafHasher,
  type LogSettings,
} from '../usecases/log/log.js';
import { LogHasher } from '../workers/log-hasher.js';
import { clearStoredKeys, sealStoredKeys } from '../usecases/log/key-storage.js';
import { selfCheckOrg, type SelfCheckFailure } from '../usecases/log/self-check.js';
import { announceCheckpoint } from '../usecases/log/witness.js';

export interface TransparencyLogService {
  settings: LogSettings;
  /** Integrates everything queued now (tests, admin commands). */
  sequence(): Promise<void>;
  /** Runs one self-check round over every organization; returns the mismatches found. */
  selfCheck(): Promise<SelfCheckFailure[]>;
}

declare module 'fastify' {
  interface FastifyInstance {
    transparencyLog: TransparencyLogService;
  }
}

/**
 * Leaves hashed by the worker; a round it cannot answer (its bounds, a worker that died) is
 * hashed on this thread in slices instead, and said.
 */
export function workerLeaves(
  hasher: LogHasher,
  onFallback: (err: unknown, orgId: string, rows: number) => void,
): LeafHasher {
  return async (orgId, rows) => {
    try {
      return await hasher.leaves(orgId, rows);
    } catch (err) {
      onFallback(err, orgId, rows.length);
      return leavesHere(orgId, rows);
    }
  };
}

/** Organizations sequenced per round at most; the next round takes the rest. */
const ORGS_PER_ROUND = 100;

/** How the sequencer takes a backlog: rows per transaction, and the pause after each full one. */
interface Pace {
  batch: number;
  /** After a full batch, a pause of this share of the time it took (0: none). */
  rest: number;
}

/**
 * On PostgreSQL the sequencer's transaction holds one connection of the pool and its own
 * statements run on the server: it takes a backlog at full speed. On the embedded database a
 * round holds the only connection, on the API's thread; taken at full speed, a backlog of 100,000
 * records had every request wait for rounds back to back. There it takes smaller batches and
 * rests as long as each took, so that requests run between them.
 */
function paceFor(dialect: DialectName): Pace {
  return dialect === 'pglite'
    ? { batch: EMBEDDED_SEQUENCE_BATCH, rest: 1 }
    : { batch: SEQUENCE_BATCH, rest: 0 };
}

async function sequenceAll(
  app: FastifyInstance,
  settings: LogSettings,
  hashLeaves: LeafHasher,
  pace: Pace = paceFor(app.dialect),
): Promise<void> {
  const orgIds = await transparencyLogRepository.queuedOrgs(app.db, ORGS_PER_ROUND);
  for (const orgId of orgIds) {
    const org = await app.db
      .selectFrom('orgs')
      .select(['id', 'name'])
      .where('id', '=', orgId)
      .executeTakeFirst();
    if (!org) {
      await app.db.deleteFrom('log_queue').where('org_id', '=', orgId).execute();
      continue;
    }
    // Bounded by the organization's queue: each round takes up to a batch of it.
    for (;;) {
      const started = performance.now();
      const done = await sequenceOrg(app.db, org, settings, app.clock(), hashLeaves, pace.batch);
      if (done && done.appended > 0) {
        const enqueued = await announceCheckpoint(app.db, org, done, app.clock());
        if (enqueued > 0) {
          app.domainEvents.committed([{ type: 'notifications.enqueued', count: enqueued }]);
        }
      }
      if (!done || done.appended < pace.batch) {
        break;
      }
      if (pace.rest > 0) {
        await sleep((performance.now() - started) * pace.rest);
      }
    }
  }
}

/**
 * Seals generated signing keys stored in the clear (before the secret was set), or says that they
 * are kept in the clear. A database that cannot be read now leaves them as they are: they are
 * read either way, and the next start seals them.
 */
async function keysAtRest(app: FastifyInstance, settings: LogSettings): Promise<void> {
  try {
    if (settings.encryptionSecret) {
      const sealed = await sealStoredKeys(app.db, settings.encryptionSecret);
      if (sealed > 0) {
        app.log.info({ sealed }, `transparency log: sealed ${sealed} signing keys stored in the clear`);
      }
    } else if (!settings.signingKeyPem && (await clearStoredKeys(app.db)) > 0) {
      app.log.warn(
        'transparency log: generated signing keys are stored in the database unencrypted; set VERITY_ENCRYPTION_SECRET to seal them',
      );
    }
  } catch (err) {
    app.log.error({ err }, 'transparency log: could not check the signing keys at rest');
  }
}

export default fp(
  (app, _opts, done) => {
    const config = app.config;
    const settings: LogSettings = {
      publicUrl: config.publicUrl,
      signingKeyPem: config.logSigningKey,
      encryptionSecret: config.encryptionSecret,
    };
    const failures = new Counter({
      name: 'verity_log_self_check_failures_total',
      help: 'Log entries whose stored record (or leaf) no longer matches the entry, by kind of record',
      labelNames: ['kind'] as const,
      registers: [app.metrics.registry],
    });
    const checked = new Counter({
      name: 'verity_log_self_check_entries_total',
      help: 'Log entries the self-check recomputed',
      registers: [app.metrics.registry],
    });
    const selfCheck = async (): Promise<SelfCheckFailure[]> => {
      const heads = await app.db.selectFrom('log_heads').select('org_id').execute();
      const found: SelfCheckFailure[] = [];
      for (const { org_id } of heads) {
        const round = await selfCheckOrg(app.db, org_id, config.logSelfCheckSample);
        checked.inc(round.checked);
        for (const f of round.failures) {
          failures.inc({ kind: f.kind });
          app.log.error(
            { org: org_id, kind: f.kind, record: f.id, log_index: f.index, reason: f.reason },
            `transparency log self-check: ${f.kind} ${f.id} (entry ${f.index}): ${f.reason}`,
          );
        }
        found.push(...round.failures);
      }
      return found;
    };
    // Leaves are hashed in a worker thread; a round it cannot answer is hashed here, in slices.
    const hasher = new LogHasher(LOG_KEYS);
    const hashLeaves = workerLeaves(hasher, (err, orgId, rows) =>
      app.log.warn({ err, org: orgId, rows }, 'transparency log: hashing leaves on the main thread'),
    );
    const sequencer = new Loop(
      'log-sequencer',
      () => sequenceAll(app, settings, hashLeaves),
      config.logSequenceMs,
      app.log,
    );
    const checker = new Loop('log-self-check', selfCheck, config.logSelfCheckMs, app.log);
    app.decorate('transparencyLog', {
      settings,
      sequence: () => sequenceAll(app, settings, hashLeaves),
      selfCheck,
    } satisfies TransparencyLogService);
    app.addHook('onReady', () => keysAtRest(app, settings));
    if (config.transparencyLog) {
      app.addHook('onReady', async () => {
        sequencer.start();
        checker.start();
      });
    }
    app.addHook('onClose', async () => {
      await sequencer.stop();
      await checker.stop();
      await hasher.close();
    });
    done();
  },
  { name: 'transparency-log', dependencies: ['db', 'domain-events', 'metrics'] },
);
