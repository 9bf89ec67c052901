/** How delivery figures read (lead times, rates, the UTC weeks the API counts in) and what the address may say. */
import { grouped } from '../../lib/counts.js';

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

/** Weeks the charts span, this week included. */
export const CHART_WEEKS = 12;
const WEEK = 7 * 86_400;

/** Monday 00:00 UTC of the week `epochSeconds` falls in: where the API's week buckets start. */
export function weekStart(epochSeconds: number): number {
  const d = new Date(epochSeconds * 1000);
  const sinceMonday = (d.getUTCDay() + 6) % 7;
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - sinceMonday) / 1000;
}

/** The start of the charts' range: the Monday CHART_WEEKS - 1 weeks before this week's. */
export const chartsFrom = (now: number): number => weekStart(now) - (CHART_WEEKS - 1) * WEEK;

/**
 * What the page can ask the API with: a date (the page turns it into a time in its zone), an
 * ISO 8601 date-time with its zone, or epoch seconds.
 */
const TIME = /^(\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?|\d{1,12}(\.\d+)?)$/;

/** Why a `from`/`to` of the address is not a time, or null when it is one (or absent). */
export function badTime(name: string, value: string): string | null {
  if (!value || (TIME.test(value) && (/^\d+(\.\d+)?$/.test(value) || !Number.isNaN(Date.parse(value))))) {
    return null;
  }
  return `“${name}” is not a time: “${value}”. Give a date (YYYY-MM-DD), an ISO 8601 time or epoch seconds.`;
}

/**
 * How many artifacts of a repository run in an environment, and when the API cut its list (it
 * lists at most 1,000 over all environments, and counts them all), how many of them it shows.
 */
export function runningText(shown: number, count: number): string {
  return shown < count
    ? `Showing ${grouped(shown)} of ${grouped(count)} artifacts running: the list stops at 1,000 over all environments.`
    : `${grouped(count)} artifact${count === 1 ? '' : 's'} running`;
}
