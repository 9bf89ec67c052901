/** How the console's delivery pages word figures, find the API's weeks and check times in the address. */
import { describe, expect, it } from 'vitest';
import {
  badTime,
  chartsFrom,
  isoSecond,
  leadTime,
  percent,
  weekStart,
} from '../../services/console/src/features/insight/figures.js';

const at = (iso: string) => Date.parse(iso) / 1000;

describe('delivery figures in the console', () => {
  it('words a lead time in minutes, hours or days, and an absent one as none', () => {
    expect(leadTime(null)).toBe('none');
    expect(leadTime(0)).toBe('0 min');
    expect(leadTime(59 * 60 + 29)).toBe('59 min');
    expect(leadTime(3_600)).toBe('1.0 h');
    expect(leadTime(66_000)).toBe('18.3 h');
    expect(leadTime(48 * 3_600 - 1)).toBe('48.0 h');
    expect(leadTime(48 * 3_600)).toBe('2.0 days');
    expect(leadTime(179_640)).toBe('2.1 days');
  });

  it('words a rate as a whole percentage, and no rate as none', () => {
    expect(percent(null)).toBe('none');
    expect(percent(0)).toBe('0%');
    expect(percent(0.143)).toBe('14%');
    expect(percent(1)).toBe('100%');
  });

  it('starts a week on Monday 00:00 UTC, as the API buckets weeks', () => {
    expect(weekStart(at('2026-11-23T00:00:00Z'))).toBe(at('2026-11-23T00:00:00Z'));
    expect(weekStart(at('2026-11-27T00:34:16Z'))).toBe(at('2026-11-23T00:00:00Z'));
    // Sunday's last second still belongs to the week that began six days before
    expect(weekStart(at('2026-11-29T23:59:59Z'))).toBe(at('2026-11-23T00:00:00Z'));
    // across a month and a year
    expect(weekStart(at('2027-01-02T12:00:00Z'))).toBe(at('2026-12-28T00:00:00Z'));
    expect(chartsFrom(at('2026-11-27T00:34:16Z'))).toBe(at('2026-09-07T00:00:00Z'));
    expect(isoSecond(at('2026-11-23T10:11:12.999Z'))).toBe('2026-11-23T10:11:12Z');
  });

  it('takes dates, zoned ISO times and epoch seconds in the address, and says what is wrong with anything else', () => {
    for (const ok of [
      '',
      '2026-11-01',
      '2026-11-01T10:00Z',
      '2026-11-01T10:00:00.5+01:00',
      '1795392000',
      '1795392000.5',
    ]) {
      expect(badTime('from', ok), ok).toBeNull();
    }
    expect(badTime('from', 'yesterday')).toBe(
      '“from” is not a time: “yesterday”. Give a date (YYYY-MM-DD), an ISO 8601 time or epoch seconds.',
    );
    for (const bad of ['2026-13-45', '2026-11-01T10:00', '-5', '1e9', '2026-11-01 10:00Z']) {
      expect(badTime('to', bad), bad).toMatch(/^“to” is not a time/);
    }
  });
});
