/** How the retention page reads the disposition list: the page its `next` link names, and the caption. */
import { rangeOf } from '../../lib/counts.js';

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
