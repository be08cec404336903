/**
 * Timestamps mean what they say. Text without a zone is Asia/Shanghai wall time
 * (spec 2.2, 2.10, 2.11); ISO 8601 with `Z` or an offset is that instant (2.9); fractions are
 * kept; anything else is not a timestamp (null), never passed on as text.
 */
import { describe, expect, it } from 'vitest';
import { DateTimeText } from '../../src/api/schemas/common.ts';
import { Deduction } from '../../src/api/schemas/account.ts';
import { toDeductionRow } from '../../src/transform/account.ts';
import { apiInstant, apiTimestampToIso, shanghaiDayOf } from '../../src/transform/time.ts';

describe('apiTimestampToIso', () => {
  it.each([
    // No zone: Shanghai wall time, as the spec writes it.
    ['2026-11-21 08:00:00', '2026-11-21T08:00:00+08:00', '2026-11-21T00:00:00Z'],
    ['2026-11-21T08:00:00', '2026-11-21T08:00:00+08:00', '2026-11-21T00:00:00Z'],
    ['2026-11-21 08:00', '2026-11-21T08:00:00+08:00', '2026-11-21T00:00:00Z'],
    ['  2026-11-21 08:00:00  ', '2026-11-21T08:00:00+08:00', '2026-11-21T00:00:00Z'],
    // Z and offsets: that instant, shown in Shanghai.
    ['2026-11-21T00:00:00Z', '2026-11-21T08:00:00+08:00', '2026-11-21T00:00:00Z'],
    ['2026-11-21T00:00:00z', '2026-11-21T08:00:00+08:00', '2026-11-21T00:00:00Z'],
    ['2026-11-21T08:00:00+08:00', '2026-11-21T08:00:00+08:00', '2026-11-21T00:00:00Z'],
    ['2026-11-21T02:00:00+02:00', '2026-11-21T08:00:00+08:00', '2026-11-21T00:00:00Z'],
    ['2026-11-20T20:30:00-03:30', '2026-11-21T08:00:00+08:00', '2026-11-21T00:00:00Z'],
    ['2026-11-21T05:30:00+0530', '2026-11-21T08:00:00+08:00', '2026-11-21T00:00:00Z'],
    ['2026-11-21 08:00:00+08', '2026-11-21T08:00:00+08:00', '2026-11-21T00:00:00Z'],
    ['2026-11-21 08:00:00 +08:00', '2026-11-21T08:00:00+08:00', '2026-11-21T00:00:00Z'],
    ['2026-11-21T00:00:00-00:00', '2026-11-21T08:00:00+08:00', '2026-11-21T00:00:00Z'],
    // Fractions: kept to microseconds (the warehouses' precision), trailing zeros dropped.
    ['2026-11-21T00:00:00.5Z', '2026-11-21T08:00:00.5+08:00', '2026-11-21T00:00:00.500Z'],
    ['2026-11-21T00:00:00.123Z', '2026-11-21T08:00:00.123+08:00', '2026-11-21T00:00:00.123Z'],
    ['2026-11-21T00:00:00.123456789Z', '2026-11-21T08:00:00.123456+08:00', '2026-11-21T00:00:00.123Z'],
    ['2026-11-21T00:00:00.000Z', '2026-11-21T08:00:00+08:00', '2026-11-21T00:00:00Z'],
    ['2026-11-21 08:00:00.250', '2026-11-21T08:00:00.25+08:00', '2026-11-21T00:00:00.250Z'],
    ['2026-11-21T00:00:00,5Z', '2026-11-21T08:00:00.5+08:00', '2026-11-21T00:00:00.500Z'],
    // Across a year end, a leap day, and the far past.
    ['2025-12-31T23:59:59.999-10:00', '2026-01-01T17:59:59.999+08:00', '2026-01-01T09:59:59.999Z'],
    ['2024-02-29 12:00:00', '2024-02-29T12:00:00+08:00', '2024-02-29T04:00:00Z'],
  ])('%j -> %s (the instant %s)', (text, iso, instant) => {
    expect(apiTimestampToIso(text)).toBe(iso);
    expect(Date.parse(iso)).toBe(Date.parse(instant));
  });

  it.each([
    '',
    'yesterday',
    '2026-11-21',
    '2026-11-21 8:00:00',
    '2026-11-21 08:00:00abc',
    '2026-11-21 08:00:00 PST',
    '2026-11-21 08:00:00 Asia/Shanghai',
    '2026-11-21T08:00:00+8',
    '2026-02-30 10:00:00',
    '2026-13-01 10:00:00',
    '2026-11-21 24:00:00',
    '2026-11-21 23:60:00',
    '2026-11-21 23:59:60',
    '2026-11-21T08:00:00+24:00',
    '2026-11-21T08:00:00+08:60',
    '1732176000',
    '21/11/2026 08:00:00',
  ])('%j is not a timestamp', (text) => {
    expect(apiTimestampToIso(text)).toBeNull();
    expect(DateTimeText.safeParse(text).success).toBe(false);
    expect(() => apiInstant(text)).toThrow(RangeError);
  });

  it('null and undefined are no timestamp', () => {
    expect(apiTimestampToIso(null)).toBeNull();
    expect(apiTimestampToIso(undefined)).toBeNull();
  });
});

describe('an instant near midnight: the day is Shanghai`s, not UTC`s', () => {
  it.each([
    // 16:30 UTC on Dec 31 is 00:30 on Jan 1 in Shanghai.
    ['2025-12-31T16:30:00Z', '2025-12-31', '2026-01-01'],
    ['2025-12-31T16:30:00.123456+00:00', '2025-12-31', '2026-01-01'],
    ['2026-01-01 00:30:00', '2025-12-31', '2026-01-01'],
    ['2025-12-31T12:30:00-04:00', '2025-12-31', '2026-01-01'],
    // 15:59:59 UTC is still the same day in both.
    ['2025-12-31T15:59:59.999Z', '2025-12-31', '2025-12-31'],
    // Late evening in New York is the next day in UTC and in Shanghai.
    ['2026-11-21T23:30:00-05:00', '2026-11-22', '2026-11-22'],
    // As read back from the warehouses.
    ['2026-01-01 00:30:00+08', '2025-12-31', '2026-01-01'],
    ['2025-12-31 16:30:00.5+00', '2025-12-31', '2026-01-01'],
  ])('%s: UTC day %s, Shanghai day %s', (text, utcDay, shanghaiDay) => {
    const iso = apiTimestampToIso(text)!;
    expect(new Date(iso).toISOString().slice(0, 10)).toBe(utcDay);
    expect(shanghaiDayOf(text)).toBe(shanghaiDay);
    expect(shanghaiDayOf(iso)).toBe(shanghaiDay);
  });

  it('a deduction at such an instant is stored as that instant, on its Shanghai day', () => {
    const d = Deduction.parse({
      id: 1,
      user_id: 7,
      project_id: 101,
      diff_amount: -1,
      before_amount: 2,
      after_amount: 1,
      remark: 'r',
      created_at: '2025-12-31T16:30:00.25Z',
    });
    const row = toDeductionRow(d);
    expect(row.created_at).toBe('2026-01-01T00:30:00.25+08:00');
    expect(Date.parse(row.created_at)).toBe(Date.parse('2025-12-31T16:30:00.250Z'));
    expect(shanghaiDayOf(row.created_at)).toBe('2026-01-01');
  });
});
