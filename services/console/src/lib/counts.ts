/** How counts and a page's place in a list read ("1–50 of 1,234 deployments"); no DOM, no React. */

const GROUPED = new Intl.NumberFormat('en');

/** A count with its thousands grouped: "1,000". */
export const grouped = (n: number): string => GROUPED.format(n);

/**
 * Where a page of a list stands in it: "1–50 of 1,234 deployments" (no noun without `one`). A
 * total the API stopped counting (`capped`) reads "of more than 10,000"; a page whose start it did
 * not count (`offset` null) reads "50 deployments past the first 10,000, of more than 10,000".
 */
export function rangeOf(
  page: { offset: number | null; shown: number; total: number; capped?: boolean },
  one = '',
  many = `${one}s`,
): string {
  const noun = (n: number, exact = true) => (one === '' ? '' : ` ${n === 1 && exact ? one : many}`);
  const total = page.capped ? `more than ${grouped(page.total)}` : grouped(page.total);
  if (page.offset === null) {
    return `${grouped(page.shown)}${noun(page.shown)} past the first ${grouped(page.total)}, of ${total}`;
  }
  if (page.shown === 0) {
    return `none of ${total}${noun(page.total, !page.capped)}`;
  }
  const first = grouped(page.offset + 1);
  const last = grouped(page.offset + page.shown);
  return `${first}–${last} of ${total}${noun(page.total, !page.capped)}`;
}
