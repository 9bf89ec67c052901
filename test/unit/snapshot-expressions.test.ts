import { describe, expect, it } from 'vitest';
import {
  intervalIndex,
  parseEventBound,
  parseInterval,
  parseIsoTime,
  parseSnapshotExpression,
  resolveSnapshotExpression,
  splitSnappish,
  subtractTime,
} from '../../services/api/src/domain/snapshot-expressions.js';

const NOW = Date.UTC(2026, 10, 15, 12, 0, 0);

describe('snapshot expressions (section 5)', () => {
  it.each([
    { text: '3', latest: 10, expected: { index: 3 } },
    { text: '#23', latest: 30, expected: { index: 23 } },
    { text: '-1', latest: 10, expected: { index: 10 } },
    { text: '-3', latest: 10, expected: { index: 8 } },
    { text: '~1', latest: 10, expected: { index: 9 } },
    { text: '~0', latest: 10, expected: { index: 10 } },
    { text: '@{now}', latest: 7, expected: { index: 7 } },
    { text: '@{2023-02-14T12:00:00}', latest: 7, expected: { atMs: Date.UTC(2023, 1, 14, 12) } },
    { text: '@{2023-02-14T12:00:00Z}', latest: 7, expected: { atMs: Date.UTC(2023, 1, 14, 12) } },
    { text: '@{2.hours.ago}', latest: 7, expected: { atMs: NOW - 2 * 3_600_000 } },
    { text: '@{3.weeks.ago}', latest: 7, expected: { atMs: NOW - 21 * 86_400_000 } },
    { text: '@{1.months.ago}', latest: 7, expected: { atMs: Date.UTC(2026, 9, 15, 12) } },
  ])('$text resolves to $expected', ({ text, latest, expected }) => {
    const parsed = parseSnapshotExpression(text);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) {
      expect(resolveSnapshotExpression(parsed.value, latest, NOW)).toEqual(expected);
    }
  });

  it.each([
    '0',
    '#0',
    '-0',
    'abc',
    '@{yesterday}',
    '@{2023-13-01T00:00:00}',
    '@{2023-02-30T00:00:00}',
    '@{3.fortnights.ago}',
    '1.5',
  ])('refuses %s with a reason', (text) => {
    const parsed = parseSnapshotExpression(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.reason.length).toBeGreaterThan(5);
    }
  });

  it('moves months on the calendar and clamps the day', () => {
    expect(subtractTime(Date.UTC(2026, 2, 31, 8), 1, 'month')).toBe(Date.UTC(2026, 1, 28, 8));
    expect(subtractTime(Date.UTC(2024, 2, 31), 1, 'month')).toBe(Date.UTC(2024, 1, 29));
    expect(subtractTime(Date.UTC(2026, 0, 10), 1, 'year')).toBe(Date.UTC(2025, 0, 10));
  });

  it('parses ISO times with offsets and fractions', () => {
    expect(parseIsoTime('2026-01-02T03:04:05.5+02:00')).toEqual({
      ok: true,
      value: Date.UTC(2026, 0, 2, 1, 4, 5, 500),
    });
    expect(parseIsoTime('2026-01-02')).toEqual({ ok: true, value: Date.UTC(2026, 0, 2) });
  });
});

describe('intervals a..b', () => {
  it.each([
    { text: '5..10', latest: 20, expected: [5, 10] },
    { text: '~5..NOW', latest: 20, expected: [15, 20] },
    { text: '..', latest: 20, expected: [20, 20] },
    { text: '3..', latest: 20, expected: [3, 20] },
  ])('$text with latest $latest is $expected', ({ text, latest, expected }) => {
    const parsed = parseInterval(text);
    expect(parsed.ok).toBe(true);
    if (parsed.ok && parsed.value) {
      expect([intervalIndex(parsed.value.from, latest), intervalIndex(parsed.value.to, latest)]).toEqual(
        expected,
      );
    }
  });

  it('treats an empty interval as everything and refuses nonsense', () => {
    expect(parseInterval('')).toEqual({ ok: true, value: null });
    expect(parseInterval('a..b')).toEqual({ ok: false, reason: 'Invalid interval value: a..b' });
    expect(parseInterval('1..2..3').ok).toBe(false);
  });

  it.each([
    { text: 'NOW', expected: { kind: 'fromLatest', back: 0 } },
    { text: '4', expected: { kind: 'index', index: 4 } },
    { text: '1hour', expected: { kind: 'ago', amount: 1, unit: 'hour' } },
    { text: '2days', expected: { kind: 'ago', amount: 2, unit: 'day' } },
    { text: '30mins', expected: { kind: 'ago', amount: 30, unit: 'minute' } },
  ])('event bound $text', ({ text, expected }) => {
    expect(parseEventBound(text)).toEqual({ ok: true, value: expected });
  });
});

describe('snappish', () => {
  it.each([
    { text: 'prod', expected: { environment: 'prod', expression: '-1' } },
    { text: 'prod#10', expected: { environment: 'prod', expression: '#10' } },
    { text: 'prod~2', expected: { environment: 'prod', expression: '~2' } },
    { text: 'prod@{1.day.ago}', expected: { environment: 'prod', expression: '@{1.day.ago}' } },
    { text: 'my-env.eu', expected: { environment: 'my-env.eu', expression: '-1' } },
  ])('$text', ({ text, expected }) => {
    expect(splitSnappish(text)).toEqual(expected);
  });
});
