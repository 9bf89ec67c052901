/**
 * Snapshot expressions (semantics.md section 5): `N`, `#N`, `-N` (-1 = latest), `~N` (N behind
 * the latest), `@{ISO time}` (UTC), `@{N.unit.ago}`, `@{now}`; intervals `a..b` for lists; and the
 * "snappish" `env#N`, `env~N`, `env@{...}` of env-diff. Times are epoch milliseconds: this module
 * never reads a clock.
 */

import { MIN_TIME_SECONDS } from '../../../shared/contract/common.js';

/** A parsed expression: a fixed index, a count back from the latest, or a moment. */
export type SnapshotExpression =
  | { kind: 'index'; index: number }
  | { kind: 'fromLatest'; back: number }
  | { kind: 'at'; atMs: number }
  | { kind: 'ago'; amount: number; unit: TimeUnit };

export type TimeUnit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'year';

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

const UNIT_ALIASES: Record<string, TimeUnit> = {
  s: 'second',
  sec: 'second',
  secs: 'second',
  second: 'second',
  seconds: 'second',
  m: 'minute',
  min: 'minute',
  mins: 'minute',
  minute: 'minute',
  minutes: 'minute',
  h: 'hour',
  hour: 'hour',
  hours: 'hour',
  d: 'day',
  day: 'day',
  days: 'day',
  w: 'week',
  week: 'week',
  weeks: 'week',
  month: 'month',
  months: 'month',
  y: 'year',
  year: 'year',
  years: 'year',
};

const UNIT_MS: Record<Exclude<TimeUnit, 'month' | 'year'>, number> = {
  second: 1000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 604_800_000,
};

/** The most of each unit `N.<unit>.ago` may name: 10,000 years, the span of four-digit years. */
const MAX_AGO: Record<TimeUnit, number> = {
  second: 315_576_000_000,
  minute: 5_259_600_000,
  hour: 87_660_000,
  day: 3_652_500,
  week: 521_785,
  month: 120_000,
  year: 10_000,
};

/** `N.<unit>.ago` as a parse result: refused when N reaches back over {@link MAX_AGO}. */
function agoOf(amount: number, unit: TimeUnit): Parsed<{ amount: number; unit: TimeUnit }> {
  return amount > MAX_AGO[unit]
    ? { ok: false, reason: `${amount} ${unit}s ago is further back than 10000 years` }
    : { ok: true, value: { amount, unit } };
}

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** The inverse of daysFromCivil. */
function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

const ISO_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** Parses an ISO 8601 date or date-time (UTC unless an offset is given) to epoch ms. */
export function parseIsoTime(text: string): Parsed<number> {
  const m = ISO_PATTERN.exec(text.trim());
  if (!m) {
    return { ok: false, reason: `'${text}' is not a time of the form YYYY-MM-DDTHH:MM:SS` };
  }
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((v) =>
    v === undefined ? 0 : Number(v),
  ) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) {
    return { ok: false, reason: `'${text}' is not a valid time` };
  }
  const fraction = m[7] ? Number(`0.${m[7]}`) * 1000 : 0;
  let offsetMs = 0;
  const zone = m[8];
  if (zone && zone !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    offsetMs = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4))) * 60_000;
  }
  const days = daysFromCivil(year, month, day);
  if (civilFromDays(days).day !== day) {
    return { ok: false, reason: `'${text}' is not a valid date` };
  }
  return {
    ok: true,
    value: days * 86_400_000 + ((hour * 60 + minute) * 60 + second) * 1000 + fraction - offsetMs,
  };
}

/**
 * Subtracts `amount` units from `nowMs`; months and years move the calendar, clamping the day.
 * A moment before year 1 is year 1 (no snapshot is older), so it stays a valid database time.
 */
export function subtractTime(nowMs: number, amount: number, unit: TimeUnit): number {
  return Math.max(MIN_TIME_SECONDS * 1000, subtractUnclamped(nowMs, amount, unit));
}

function subtractUnclamped(nowMs: number, amount: number, unit: TimeUnit): number {
  if (unit === 'month' || unit === 'year') {
    const months = unit === 'year' ? amount * 12 : amount;
    const days = Math.floor(nowMs / 86_400_000);
    const timeOfDay = nowMs - days * 86_400_000;
    const { year, month, day } = civilFromDays(days);
    const total = year * 12 + (month - 1) - months;
    const y = Math.floor(total / 12);
    const mo = total - y * 12 + 1;
    const lastDay = civilFromDays(daysFromCivil(mo === 12 ? y + 1 : y, mo === 12 ? 1 : mo + 1, 1) - 1).day;
    return daysFromCivil(y, mo, Math.min(day, lastDay)) * 86_400_000 + timeOfDay;
  }
  return nowMs - amount * UNIT_MS[unit];
}

function parseAgo(text: string): Parsed<{ amount: number; unit: TimeUnit }> | undefined {
  // 3.weeks.ago, 3 weeks ago, 2.hours.ago
  const m = /^(\d+)[.\s]+([a-z]+)[.\s]+ago$/i.exec(text.trim());
  if (!m) {
    return undefined;
  }
  const unit = UNIT_ALIASES[m[2]!.toLowerCase()];
  if (!unit) {
    return { ok: false, reason: `unknown time unit '${m[2]}'` };
  }
  return agoOf(Number(m[1]), unit);
}

/** Parses one snapshot expression (the part after the environment name), already path-decoded. */
export function parseSnapshotExpression(text: string): Parsed<SnapshotExpression> {
  const t = text.trim();
  const bad = (): Parsed<SnapshotExpression> => ({
    ok: false,
    reason: `'${text}' is not a snapshot expression: use N, #N, -N, ~N, @{YYYY-MM-DDTHH:MM:SS} or @{N.<unit>.ago}`,
  });
  let m = /^#?(\d+)$/.exec(t);
  if (m) {
    const index = Number(m[1]);
    return index >= 1 ? { ok: true, value: { kind: 'index', index } } : bad();
  }
  m = /^-(\d+)$/.exec(t);
  if (m) {
    const n = Number(m[1]);
    return n >= 1 ? { ok: true, value: { kind: 'fromLatest', back: n - 1 } } : bad();
  }
  m = /^~(\d+)$/.exec(t);
  if (m) {
    return { ok: true, value: { kind: 'fromLatest', back: Number(m[1]) } };
  }
  m = /^@\{(.*)\}$/.exec(t);
  if (m) {
    const inner = m[1]!.trim();
    if (inner.toLowerCase() === 'now') {
      return { ok: true, value: { kind: 'fromLatest', back: 0 } };
    }
    const ago = parseAgo(inner);
    if (ago) {
      return ago.ok ? { ok: true, value: { kind: 'ago', ...ago.value } } : ago;
    }
    const at = parseIsoTime(inner);
    return at.ok ? { ok: true, value: { kind: 'at', atMs: at.value } } : at;
  }
  if (t === '' || t.toLowerCase() === 'latest' || t.toUpperCase() === 'NOW') {
    return { ok: true, value: { kind: 'fromLatest', back: 0 } };
  }
  return bad();
}

/** What an expression names once the latest number and the time are known: an index, or a moment. */
export type ResolvedExpression = { index: number } | { atMs: number };

/** Resolves an expression against the environment's latest snapshot number and the current time. */
export function resolveSnapshotExpression(
  expr: SnapshotExpression,
  latest: number,
  nowMs: number,
): ResolvedExpression {
  switch (expr.kind) {
    case 'index':
      return { index: expr.index };
    case 'fromLatest':
      return { index: latest - expr.back };
    case 'at':
      return { atMs: expr.atMs };
    case 'ago':
      return { atMs: subtractTime(nowMs, expr.amount, expr.unit) };
  }
}

/** One end of an interval: an index form, or NOW (the latest). */
export type IntervalEnd = { kind: 'index'; index: number } | { kind: 'fromLatest'; back: number };

/** Parses an interval `a..b` of list endpoints; either side may be omitted (NOW). Empty = all. */
export function parseInterval(
  text: string | undefined,
): Parsed<{ from: IntervalEnd; to: IntervalEnd } | null> {
  const t = (text ?? '').trim();
  if (t === '') {
    return { ok: true, value: null };
  }
  const parts = t.split('..');
  if (parts.length !== 2) {
    return { ok: false, reason: `Invalid interval value: ${t}` };
  }
  const end = (s: string): IntervalEnd | undefined => {
    const v = s.trim();
    if (v === '' || v.toUpperCase() === 'NOW') {
      return { kind: 'fromLatest', back: 0 };
    }
    let m = /^#?(\d+)$/.exec(v);
    if (m && Number(m[1]) >= 1) {
      return { kind: 'index', index: Number(m[1]) };
    }
    m = /^~(\d+)$/.exec(v);
    if (m) {
      return { kind: 'fromLatest', back: Number(m[1]) };
    }
    m = /^-(\d+)$/.exec(v);
    if (m && Number(m[1]) >= 1) {
      return { kind: 'fromLatest', back: Number(m[1]) - 1 };
    }
    return undefined;
  };
  const from = end(parts[0]!);
  const to = end(parts[1]!);
  if (!from || !to) {
    return { ok: false, reason: `Invalid interval value: ${t}` };
  }
  return { ok: true, value: { from, to } };
}

/** The index an interval end names, given the latest. */
export function intervalIndex(end: IntervalEnd, latest: number): number {
  return end.kind === 'index' ? end.index : latest - end.back;
}

/**
 * A `start`/`end` bound of the events endpoint: a snapshot index (N, -N), NOW, or a time ago such
 * as `1hour`, `1h`, `2days`, `30mins`.
 */
export function parseEventBound(
  text: string,
): Parsed<IntervalEnd | { kind: 'ago'; amount: number; unit: TimeUnit }> {
  const t = text.trim();
  if (t.toUpperCase() === 'NOW') {
    return { ok: true, value: { kind: 'fromLatest', back: 0 } };
  }
  let m = /^(\d+)$/.exec(t);
  if (m && Number(m[1]) >= 1) {
    return { ok: true, value: { kind: 'index', index: Number(m[1]) } };
  }
  m = /^-(\d+)$/.exec(t);
  if (m && Number(m[1]) >= 1) {
    return { ok: true, value: { kind: 'fromLatest', back: Number(m[1]) - 1 } };
  }
  m = /^(\d+)\s*([a-z]+)$/i.exec(t);
  if (m) {
    const unit = UNIT_ALIASES[m[2]!.toLowerCase()];
    if (unit) {
      const ago = agoOf(Number(m[1]), unit);
      return ago.ok ? { ok: true, value: { kind: 'ago', ...ago.value } } : ago;
    }
  }
  return { ok: false, reason: `Invalid interval value: ${t}` };
}

/**
 * Splits a snappish such as `prod#10`, `prod~2` or `prod@{1.day.ago}` into environment and
 * expression; a bare name means its latest snapshot. Callers should first try the whole text as
 * an environment name, since names may contain `~`.
 */
export function splitSnappish(text: string): { environment: string; expression: string } {
  const m = /^(.+?)(#\d+|~\d+|@\{[^}]*\})$/.exec(text.trim());
  if (m) {
    return { environment: m[1]!, expression: m[2]! };
  }
  return { environment: text.trim(), expression: '-1' };
}
