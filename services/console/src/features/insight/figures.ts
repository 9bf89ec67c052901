/** How delivery figures read: lead times, rates and the UTC weeks the API counts in. */

/** A lead time in seconds, in the unit that reads best: "45 min", "18.3 h", "2.2 days"; "none" when null. */
export function leadTime(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) {
    return 'none';
  }
  if (seconds < 3_600) {
    return `${Math.max(0, Math.round(seconds / 60))} min`;
  }
  if (seconds < 48 * 3_600) {
    return `${(seconds / 3_600).toFixed(1)} h`;
  }
  return `${(seconds / 86_400).toFixed(1)} days`;
}

/** A rate between 0 and 1 as a whole percentage; "none" when null. */
export const percent = (rate: number | null): string =>
  rate === null ? 'none' : `${Math.round(rate * 100)}%`;

const utcDay = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
const utcDate = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  timeZone: 'UTC',
});

/** The UTC day a week bucket starts on, for axis labels ("Nov 23"). */
export const weekLabel = (epochSeconds: number): string => utcDay.format(new Date(epochSeconds * 1000));

/** A UTC date with its year ("Nov 23, 2026"), for table rows and ranges. */
export const utcDateText = (epochSeconds: number): string => utcDate.format(new Date(epochSeconds * 1000));

/** An ISO date-time (to the second) of epoch seconds, as the API's `from`/`to` accept it. */
export const isoSecond = (epochSeconds: number): string =>
  `${new Date(Math.floor(epochSeconds) * 1000).toISOString().slice(0, 19)}Z`;
