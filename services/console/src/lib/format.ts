/** How times, ages and counts read on every page. */

import { zoneChoice } from './preferences';

const DATE_TIME: Intl.DateTimeFormatOptions = {
  year: 'numeric',
  month: 'short',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  timeZoneName: 'short',
};
const formats = {
  local: new Intl.DateTimeFormat(undefined, DATE_TIME),
  utc: new Intl.DateTimeFormat(undefined, { ...DATE_TIME, timeZone: 'UTC' }),
};

/** The zone times are shown in, by name ("UTC", or the browser's zone such as "Europe/Berlin"). */
export function zoneName(): string {
  return zoneChoice() === 'utc' ? 'UTC' : (formats.local.resolvedOptions().timeZone ?? 'local time');
}

/** An epoch-seconds time as a date and time in the chosen zone, which it names ("… UTC", "… GMT+1"). */
export function formatTime(epochSeconds: number | null | undefined): string {
  if (epochSeconds === null || epochSeconds === undefined) {
    return 'never';
  }
  return formats[zoneChoice()].format(new Date(epochSeconds * 1000));
}

/** An ISO string of epoch seconds, for `<time dateTime>`. */
export function isoTime(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString();
}

/** "3 minutes ago", from epoch seconds. */
export function formatAge(epochSeconds: number | null | undefined, now = Date.now()): string {
  if (epochSeconds === null || epochSeconds === undefined) {
    return 'never';
  }
  return `${formatDuration(Math.max(0, now / 1000 - epochSeconds))} ago`;
}

/** A duration in seconds as its largest unit. */
export function formatDuration(seconds: number): string {
  const units: Array<[number, string]> = [
    [86_400, 'day'],
    [3_600, 'hour'],
    [60, 'minute'],
  ];
  for (const [size, name] of units) {
    if (seconds >= size) {
      const n = Math.floor(seconds / size);
      return `${n} ${name}${n === 1 ? '' : 's'}`;
    }
  }
  const s = Math.floor(seconds);
  return `${s} second${s === 1 ? '' : 's'}`;
}

/** The first characters of a fingerprint or commit. */
export const short = (sha: string | null | undefined, n = 12): string => (sha ? sha.slice(0, n) : '');

/** "1 artifact", "3 artifacts". */
export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Any JSON value as indented text (always rendered as text, never as markup). */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? '';
  } catch {
    return String(value);
  }
}

/** A link only for http(s) URLs: anything else (javascript:, data:) is shown as text. */
export function safeHref(url: string | null | undefined): string | undefined {
  if (!url) {
    return undefined;
  }
  try {
    const u = new URL(url, window.location.origin);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.href : undefined;
  } catch {
    return undefined;
  }
}

/** The console path of an html_url the API handed out (its host may be the public URL). */
export function consolePath(htmlUrl: string | null | undefined): string | undefined {
  if (!htmlUrl) {
    return undefined;
  }
  try {
    const u = new URL(htmlUrl, window.location.origin);
    return `${u.pathname}${u.search}`;
  } catch {
    return undefined;
  }
}

/** Console paths, each segment encoded. */
export const paths = {
  home: (org: string) => `/${encodeURIComponent(org)}`,
  deployments: (org: string, query: Record<string, string> = {}) => {
    const q = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== '')).toString();
    return `/${encodeURIComponent(org)}/deployments${q ? `?${q}` : ''}`;
  },
  /** A repository's page: its name's slashes stay path separators, each part encoded. */
  repo: (org: string, repo: string) =>
    `/${encodeURIComponent(org)}/repos/${repo.split('/').map(encodeURIComponent).join('/')}`,
  environments: (org: string) => `/${encodeURIComponent(org)}/environments`,
  environment: (org: string, env: string) =>
    `/${encodeURIComponent(org)}/environments/${encodeURIComponent(env)}`,
  snapshot: (org: string, env: string, index: number) =>
    `/${encodeURIComponent(org)}/environments/${encodeURIComponent(env)}/snapshots/${index}`,
  /** The snapshot current at a time: `@{…}` around the UTC ISO time, to the second. */
  snapshotAt: (org: string, env: string, epochSeconds: number) =>
    `/${encodeURIComponent(org)}/environments/${encodeURIComponent(env)}/snapshots/${encodeURIComponent(`@{${new Date(epochSeconds * 1000).toISOString().slice(0, 19)}Z}`)}`,
  diff: (org: string, env: string, from: number, to: number) =>
    `/${encodeURIComponent(org)}/environments/${encodeURIComponent(env)}/diff?from=${from}&to=${to}`,
  flows: (org: string) => `/${encodeURIComponent(org)}/flows`,
  flow: (org: string, flow: string) => `/${encodeURIComponent(org)}/flows/${encodeURIComponent(flow)}`,
  trail: (org: string, flow: string, trail: string) =>
    `/${encodeURIComponent(org)}/flows/${encodeURIComponent(flow)}/trails/${encodeURIComponent(trail)}`,
  artifact: (org: string, flow: string, fingerprint: string) =>
    `/${encodeURIComponent(org)}/flows/${encodeURIComponent(flow)}/artifacts/${encodeURIComponent(fingerprint)}`,
  search: (org: string, q: string) => `/${encodeURIComponent(org)}/search?q=${encodeURIComponent(q)}`,
  exposure: (org: string, purl: string) =>
    `/${encodeURIComponent(org)}/exposure?purl=${encodeURIComponent(purl)}`,
};

/** A time the API sends as a string: epoch seconds, or an ISO date. */
export function stringTime(value: string | null | undefined): number | null {
  if (!value) {
    return null;
  }
  const n = Number(value);
  if (Number.isFinite(n)) {
    return n;
  }
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms / 1000;
}

const dateOnly = {
  local: new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' }),
  utc: new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' }),
};
const hourOnly = {
  local: new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' }),
  utc: new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', timeZone: 'UTC' }),
};

/** An epoch-seconds time as a short date ("Nov 3") in the chosen zone, for axis ticks. */
export function formatDate(epochSeconds: number): string {
  return dateOnly[zoneChoice()].format(new Date(epochSeconds * 1000));
}

/** An epoch-seconds time as an hour of the day ("14:00") in the chosen zone, for axis ticks. */
export function formatHour(epochSeconds: number): string {
  return hourOnly[zoneChoice()].format(new Date(epochSeconds * 1000));
}

/**
 * The wall-clock time of the chosen zone as `YYYY-MM-DDTHH:MM` (a datetime-local input's value),
 * and back: the picker speaks the same zone as the page.
 */
export function toZoneInput(epochSeconds: number): string {
  const d = new Date(epochSeconds * 1000);
  const shifted = zoneChoice() === 'utc' ? d : new Date(d.getTime() - d.getTimezoneOffset() * 60_000);
  return shifted.toISOString().slice(0, 16);
}

/** A datetime-local value read in the chosen zone, as epoch seconds; null when not a time. */
export function fromZoneInput(value: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value)) {
    return null;
  }
  const ms = zoneChoice() === 'utc' ? Date.parse(`${value}Z`) : new Date(value).getTime();
  return Number.isNaN(ms) ? null : ms / 1000;
}
