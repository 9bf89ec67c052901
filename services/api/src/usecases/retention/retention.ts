/**
 * Retention classes and legal holds (`/retention/{org}`, `/legal-holds/{org}`) and the
 * disposition records the retention job leaves (`retention-run.ts`). Classes may name flows and
 * environments that do not exist (yet): a class applies to whatever carries the name when the
 * job runs, and the settings list the names nothing carries.
 */
import type { z } from 'zod';
import { cappedCount, COUNT_CAP } from '../../../../shared/contract/common.js';
import type {
  Disposition,
  DispositionList,
  LegalHold,
  LegalHoldPost,
  RetentionPut,
  RetentionSettings,
} from '../../../../shared/contract/retention.js';
import { MAX_DISPOSITION_PAGE, MAX_LEGAL_HOLDS } from '../../../../shared/contract/retention.js';
import { belowMinimum, describeHold, type PeriodName } from '../../domain/retention.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import {
  retentionRepository,
  type DispositionRow,
  type LegalHoldRow,
} from '../../storage/repositories/retention.js';
import { epochSeconds } from '../../time.js';
import { transact, type OrgScope } from '../scope/org-scope.js';

/** The server operator's floor under each period (0: none). */
export type RetentionMinimum = Record<PeriodName, number>;

const EMPTY = { default: {}, flows: {}, environments: {} };

/** Names of flows and environments of the organization among `names`. */
async function existing(
  scope: OrgScope,
  table: 'flows' | 'environments',
  names: string[],
): Promise<Set<string>> {
  if (names.length === 0) {
    return new Set();
  }
  const rows = await scope.db
    .selectFrom(table)
    .select('name')
    .where('org_id', '=', scope.org.id)
    .where('name', 'in', names)
    .execute();
  return new Set(rows.map((r) => r.name));
}

/** The organization's retention classes; with no row, everything is kept forever. */
export async function getRetention(
  scope: OrgScope,
  minimum: RetentionMinimum,
): Promise<z.infer<typeof RetentionSettings>> {
  const row = await retentionRepository.settings(scope.db, scope.org.id);
  const doc = row?.settings ?? EMPTY;
  const flows = Object.keys(doc.flows);
  const envs = Object.keys(doc.environments);
  const knownFlows = await existing(scope, 'flows', flows);
  const knownEnvs = await existing(scope, 'environments', envs);
  return {
    default: doc.default,
    flows: doc.flows,
    environments: doc.environments,
    operator_minimum: minimum,
    unknown_flows: flows.filter((f) => !knownFlows.has(f)),
    unknown_environments: envs.filter((e) => !knownEnvs.has(e)),
    updated_at: row ? epochSeconds(row.updated_at) : null,
    updated_by: row?.updated_by ?? null,
  };
}

/** Replaces the organization's classes; a period below the server's minimum is a 400 naming it. */
export async function putRetention(
  scope: OrgScope,
  body: z.infer<typeof RetentionPut>,
  minimum: RetentionMinimum,
): Promise<z.infer<typeof RetentionSettings>> {
  const problems = belowMinimum(body, minimum);
  if (Object.keys(problems).length > 0) {
    throw new ValidationError(problems, 'A retention period is below the minimum this server keeps');
  }
  await transact(scope, (s) => retentionRepository.putSettings(s.db, s.org.id, body, s.actor, s.now));
  return getRetention(scope, minimum);
}

function presentHold(h: LegalHoldRow): z.infer<typeof LegalHold> {
  const scope = { flows: h.flows, environments: h.environments, from: h.from_at, to: h.to_at };
  return {
    name: h.name,
    reason: h.reason,
    scope: {
      flows: h.flows,
      environments: h.environments,
      from: h.from_at ? epochSeconds(h.from_at) : null,
      to: h.to_at ? epochSeconds(h.to_at) : null,
    },
    covers: describeHold(scope),
    created_by: h.created_by,
    created_at: epochSeconds(h.created_at),
  };
}

export async function listLegalHolds(scope: OrgScope): Promise<Array<z.infer<typeof LegalHold>>> {
  return (await retentionRepository.holds(scope.db, scope.org.id)).map(presentHold);
}

/** Places a hold; a name in use is a 409, and an organization holds at most MAX_LEGAL_HOLDS. */
export async function createLegalHold(
  scope: OrgScope,
  body: z.infer<typeof LegalHoldPost>,
): Promise<z.infer<typeof LegalHold>> {
  return transact(scope, async (s) => {
    if ((await retentionRepository.countHolds(s.db, s.org.id)) >= MAX_LEGAL_HOLDS) {
      throw new ConflictError(
        `The organization holds ${MAX_LEGAL_HOLDS} legal holds, the most it may; release one first`,
      );
    }
    const row = {
      org_id: s.org.id,
      name: body.name,
      reason: body.reason,
      flows: JSON.stringify([...new Set(body.scope.flows)]),
      environments: JSON.stringify([...new Set(body.scope.environments)]),
      from_at: body.scope.from ?? null,
      to_at: body.scope.to ?? null,
      created_by: s.actor,
      created_at: s.now,
    };
    if (!(await retentionRepository.insertHold(s.db, row))) {
      throw new ConflictError(`A legal hold named '${body.name}' exists in '${s.org.name}'`);
    }
    return presentHold({
      ...row,
      flows: [...new Set(body.scope.flows)],
      environments: [...new Set(body.scope.environments)],
    });
  });
}

/** Releases a hold: what it kept may be removed by the next run. */
export async function releaseLegalHold(scope: OrgScope, name: string): Promise<void> {
  await transact(scope, async (s) => {
    if (!(await retentionRepository.deleteHold(s.db, s.org.id, name))) {
      throw new NotFoundError(`Legal hold '${name}' does not exist in '${s.org.name}'`);
    }
  });
}

export function presentDisposition(d: DispositionRow): z.infer<typeof Disposition> {
  return {
    id: d.id,
    kind: d.kind,
    count: d.count,
    items: d.items,
    digests: d.digests,
    rule: d.rule,
    as_of: epochSeconds(d.as_of),
    removed_at: epochSeconds(d.removed_at),
    run_by: d.run_by,
  };
}

/** A page of the organization's disposition records, newest first. */
export async function listDispositions(
  scope: OrgScope,
  page: number,
  perPage: number,
): Promise<z.infer<typeof DispositionList>> {
  const [rows, total] = await Promise.all([
    retentionRepository.dispositions(scope.db, scope.org.id, {
      offset: (page - 1) * perPage,
      limit: perPage + 1,
    }),
    retentionRepository.countDispositions(scope.db, scope.org.id, COUNT_CAP),
  ]);
  const more = rows.length > perPage && page < MAX_DISPOSITION_PAGE;
  const next = more
    ? `${scope.publicUrl}/api/v2/retention/${encodeURIComponent(scope.org.name)}/dispositions?page=${page + 1}&per_page=${perPage}`
    : null;
  return {
    dispositions: rows.slice(0, perPage).map(presentDisposition),
    next,
    ...cappedCount(total),
  };
}
