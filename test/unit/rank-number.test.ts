/**
 * Rank numbers (api/schemas/rank-number.ts): every value a server may send as `position`,
 * `visibility` or `score` is an integer of its column, the empty rank (NULL), or NULL with the
 * value as sent kept in `raw_values`; no value refuses its rank item or reaches a column as NaN.
 */
import { describe, expect, it } from 'vitest';
import { RankDetail } from '../../src/api/schemas/hierarchical.ts';
import { RANK_LIMITS, rankRawValues, readRankNumber } from '../../src/api/schemas/rank-number.ts';
import { canonicalJson } from '../../src/sync/fingerprint.ts';
import { toRankRows } from '../../src/transform/executions.ts';

const BIG = RANK_LIMITS.visibility;

describe('readRankNumber: integers, the empty rank, or NULL with the raw value kept', () => {
  it.each<[unknown, number | null]>([
    [3, 3],
    [0, 0],
    [-0, 0],
    [-7, -7],
    [BIG, BIG],
    [-BIG, -BIG],
    ['3', 3],
    ['+3', 3],
    ['03', 3],
    ['-3', -3],
    ['-0', 0],
    [' 3 ', 3],
    ['3.0', 3],
    ['3.00', 3],
    ['1e3', 1000],
    ['1E3', 1000],
    ['1.5e1', 15],
    ['10e-1', 1],
    ['0e9', 0],
    ['３', 3],
    ['＋３', 3],
    ['－３', -3],
    ['１２', 12],
    ['\u30003\u3000', 3],
    [String(BIG), BIG],
  ])('%j -> %j', (sent, value) => {
    const r = readRankNumber(sent, BIG);
    expect(r).toEqual({ value });
    expect(Object.is(r.value, -0)).toBe(false);
  });

  it.each<unknown>([null, undefined, '', '   ', '\u3000', '\t\n'])(
    '%j is the empty rank: NULL, nothing kept',
    (v) => {
      expect(readRankNumber(v, BIG)).toEqual({ value: null });
    },
  );

  it.each<[unknown, unknown]>([
    ['-', '-'],
    ['--', '--'],
    ['—', '—'],
    ['–', '–'],
    ['－', '－'],
    ['3.5', '3.5'],
    [3.5, 3.5],
    ['1e-3', '1e-3'],
    ['1e400', '1e400'],
    [Infinity, 'Infinity'],
    [-Infinity, '-Infinity'],
    ['Infinity', 'Infinity'],
    ['NaN', 'NaN'],
    ['0x10', '0x10'],
    ['.5', '.5'],
    ['5.', '5.'],
    ['1 000', '1 000'],
    ['N/A', 'N/A'],
    ['٣', '٣'],
    [BIG + 1, BIG + 1],
    [-(BIG + 1), -(BIG + 1)],
    [2 ** 60, 2 ** 60],
    [String(BIG + 1), String(BIG + 1)],
    ['1e16', '1e16'],
    [true, true],
    [false, false],
    [{}, {}],
    [[], []],
    [[3], [3]],
    [{ value: 3 }, { value: 3 }],
  ])('%j -> NULL, kept as %j', (sent, raw) => {
    expect(readRankNumber(sent, BIG)).toEqual({ value: null, raw });
  });

  it('a position, a visibility and a score are each bounded by INTEGER', () => {
    expect(readRankNumber(2 ** 31 - 1, RANK_LIMITS.position)).toEqual({ value: 2 ** 31 - 1 });
    expect(readRankNumber(2 ** 31, RANK_LIMITS.position)).toEqual({ value: null, raw: 2 ** 31 });
    expect(readRankNumber('2147483648', RANK_LIMITS.position)).toEqual({ value: null, raw: '2147483648' });
    expect(readRankNumber(-(2 ** 31) - 1, RANK_LIMITS.position)).toEqual({
      value: null,
      raw: -(2 ** 31) - 1,
    });
    for (const field of ['visibility', 'score'] as const) {
      expect(readRankNumber(2 ** 31 - 1, RANK_LIMITS[field])).toEqual({ value: 2 ** 31 - 1 });
      expect(readRankNumber(-(2 ** 31 - 1), RANK_LIMITS[field])).toEqual({ value: -(2 ** 31 - 1) });
      expect(readRankNumber(2 ** 31, RANK_LIMITS[field])).toEqual({ value: null, raw: 2 ** 31 });
      expect(readRankNumber(2 ** 53 - 1, RANK_LIMITS[field])).toEqual({ value: null, raw: 2 ** 53 - 1 });
    }
  });

  it('a day of one brand over the whole account cannot overflow its BIGINT sums', () => {
    // 4 billion ranks of one brand in one day, each at the bound: still within a BIGINT.
    const bigintMax = 2n ** 63n - 1n;
    for (const field of ['visibility', 'score'] as const)
      expect(BigInt(RANK_LIMITS[field]) * 4_000_000_000n <= bigintMax).toBe(true);
  });

  it('an exponent as long as a page costs nothing', () => {
    expect(readRankNumber(`1e${'9'.repeat(5000)}`, BIG).value).toBeNull();
    expect(readRankNumber(`1e-${'9'.repeat(5000)}`, BIG).value).toBeNull();
    expect(readRankNumber(`0e${'9'.repeat(5000)}`, BIG)).toEqual({ value: 0 });
    expect(readRankNumber(`${'0'.repeat(5000)}7`, BIG)).toEqual({ value: 7 });
  });
});

describe('a rank item: never refused for its numbers; raw values reach the row, not the JSON', () => {
  const item = (extra: Record<string, unknown>) =>
    RankDetail.parse({ brand: '石头', brand_short: '石头', ...extra });

  it('"-" in visibility and score (what a server sent for a quarter of a day) is NULL, kept raw', () => {
    const parsed = item({ position: 2, visibility: '-', score: '-' });
    expect(parsed).toMatchObject({ position: 2, visibility: null, score: null });
    expect(toRankRows(7, [parsed])).toEqual([
      {
        prompt_task_id: 7,
        ordinal: 0,
        brand: '石头',
        brand_short: '石头',
        position: 2,
        visibility: null,
        score: null,
        raw_values: { visibility: '-', score: '-' },
      },
    ]);
  });

  it('only the fields stored NULL with something sent are kept; plain items keep none', () => {
    expect(toRankRows(1, [item({ position: '３', visibility: '', score: 'N/A' })])[0]).toMatchObject({
      position: 3,
      visibility: null,
      score: null,
      raw_values: { score: 'N/A' },
    });
    expect(toRankRows(1, [item({ position: 1, visibility: 80, score: 7 })])[0]!.raw_values).toBeNull();
    // position <= 0 is no rank (spec 2.5 rule 2), as before: NULL, nothing kept.
    expect(toRankRows(1, [item({ position: -1 })])[0]).toMatchObject({ position: null, raw_values: null });
    expect(toRankRows(1, [item({ position: 3.5 })])[0]).toMatchObject({
      position: null,
      raw_values: { position: 3.5 },
    });
  });

  it('the parsed item is the JSON it was before raw values were kept (change-detection fingerprints hold)', () => {
    const parsed = item({ position: ' 3 ', visibility: '-', score: null, extra: 1 });
    expect(rankRawValues(parsed)).toEqual({ visibility: '-' });
    expect(canonicalJson(parsed)).toBe(
      '{"brand":"石头","brand_short":"石头","extra":1,"position":3,"score":null,"visibility":null}',
    );
    expect(canonicalJson(item({}))).toBe(
      '{"brand":"石头","brand_short":"石头","position":null,"score":null,"visibility":null}',
    );
  });
});
