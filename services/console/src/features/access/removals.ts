/**
 * How the retention page reads the disposition list: the page its `next` link names, the caption,
 * and each removal in words.
 */
import { grouped, rangeOf } from '../../lib/counts.js';
import type { DispositionList } from '../../lib/contract.js';

type Disposition = DispositionList['dispositions'][number];

/** Disposition records per page of "Removed lately". */
export const DISPOSITIONS_PER_PAGE = 20;

/** The page number the API's `next` link names, or undefined on the last page. */
export function nextDispositionPage(next: string | null): number | undefined {
  if (next === null) {
    return undefined;
  }
  try {
    // only the query matters: the base stands in for a link without scheme and host
    const page = Number(new URL(next, 'http://localhost').searchParams.get('page'));
    return Number.isInteger(page) && page > 1 ? page : undefined;
  } catch {
    return undefined;
  }
}

/**
 * "Showing 1–20 of 57 removals", or "of more than 10,000" past the API's count. The total is the
 * newest page's, never fewer than are shown.
 */
export const removalsShown = (shown: number, total: number, capped: boolean): string =>
  `Showing ${rangeOf({ offset: 0, shown, total: capped ? total : Math.max(total, shown), capped }, 'removal')}`;

/** Each kind of record a removal names, one and many, and the retention column it falls under. */
const KINDS: Record<Disposition['kind'], [one: string, many: string, period: string]> = {
  trails: ['trail', 'trails', 'trails and attestations'],
  evidence_files: ['evidence file', 'evidence files', 'evidence files'],
  snapshots: ['snapshot', 'snapshots', 'snapshots'],
  audit_log: ['audit log entry', 'audit log entries', 'the audit log'],
};

/**
 * What a removal removed and under which rule: "12 evidence files older than 90 days (the default
 * retention of evidence files)", "1 trail older than 365 days (flow web's retention of trails and
 * attestations)".
 */
export function removalWhat(d: Pick<Disposition, 'count' | 'kind' | 'rule'>): string {
  const [one, many, period] = KINDS[d.kind];
  // The contract allows a flow or environment rule without a name.
  const whose =
    d.rule.scope === 'default'
      ? 'the default'
      : d.rule.name
        ? `${d.rule.scope} ${d.rule.name}'s`
        : `a ${d.rule.scope}'s`;
  return `${grouped(d.count)} ${d.count === 1 ? one : many} older than ${grouped(d.rule.days)} days (${whose} retention of ${period})`;
}
