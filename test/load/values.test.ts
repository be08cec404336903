/** Value conventions that need no database: COPY text encoding, PostgreSQL timestamptz text, batches. */
import { describe, expect, it } from 'vitest';
import { prepareBatch } from '../../src/load/batch.ts';
import { copyTextChunks, encodeCopyValue, pgJsonText } from '../../src/load/postgres/copy.ts';
import { parseTimestamptz } from '../../src/load/postgres/type-parsers.ts';
import { EXECUTION_RANKS } from '../../src/load/tables.ts';
import { shanghaiIso } from '../../src/load/values.ts';
import { batch, card, execution, products, rank, screenshot, source } from './fixtures.ts';

describe('COPY text encoding', () => {
  it('escapes backslash, tab, newline and carriage return; NULL is \\N; U+0000 is dropped', () => {
    expect(encodeCopyValue('text', 'a\\b\tc\nd\re\0f')).toBe('a\\\\b\\tc\\nd\\re' + 'f');
    expect(encodeCopyValue('text', null)).toBe('\\N');
    expect(encodeCopyValue('text', '\\N')).toBe('\\\\N');
    expect(encodeCopyValue('boolean', false)).toBe('f');
    expect(encodeCopyValue('bigint', 9007199254740991)).toBe('9007199254740991');
    expect(encodeCopyValue('money', '-12345678.1234')).toBe('-12345678.1234');
  });

  it('JSON: serialized, escaped, without the \\u0000 escape PostgreSQL refuses', () => {
    expect(encodeCopyValue('json', { a: 'x\ny' })).toBe('{"a":"x\\\\ny"}');
    expect(encodeCopyValue('json', null)).toBe('\\N');
    expect(pgJsonText({ a: 'x\0y', b: '\\u0000 as text' })).toBe('{"a":"xy","b":"\\\\u0000 as text"}');
    expect(JSON.parse(pgJsonText(['\0\0', '\\\0']))).toEqual(['', '\\']);
  });

  it('one line per row, columns in table order', () => {
    const text = [...copyTextChunks(EXECUTION_RANKS, [rank(1, 0, 'Acme', null), rank(1, 1, 'B\tx', 2)])].join(
      '',
    );
    expect(text).toBe('1\t0\tAcme\tAcm\t\\N\t\\N\t\\N\t\\N\n1\t1\tB\\tx\tB\\tx\t2\t80\t7\t\\N\n');
  });
});

describe('timestamptz text -> +08:00 instants', () => {
  it.each([
    ['2026-11-21 00:00:00+00', '2026-11-21T08:00:00+08:00'],
    ['2026-11-21 08:00:00+08', '2026-11-21T08:00:00+08:00'],
    ['2026-11-20 18:30:00-05:30', '2026-11-21T08:00:00+08:00'],
    ['2026-11-21 00:00:00.25+00', '2026-11-21T08:00:00.250+08:00'],
    ['2026-11-21 00:00:00.123456+00', '2026-11-21T08:00:00.123+08:00'],
    ['1900-01-01 00:00:00+08:05:43', '1899-12-31T23:54:17+08:00'],
    // 0001-01-01 in Shanghai is 1 BC in UTC; years below 100 are not read as 19xx.
    ['0001-12-31 16:00:00+00 BC', '0001-01-01T00:00:00+08:00'],
    ['0050-06-01 12:00:00+00', '0050-06-01T20:00:00+08:00'],
    ['9999-12-31 15:59:59.999999+00', '9999-12-31T23:59:59.999+08:00'],
    ['infinity', 'infinity'],
  ])('%s', (text, iso) => {
    expect(parseTimestamptz(text)).toBe(iso);
  });

  it('shanghaiIso keeps milliseconds only when there are some', () => {
    expect(shanghaiIso(Date.parse('2026-11-21T00:00:00Z'))).toBe('2026-11-21T08:00:00+08:00');
    expect(shanghaiIso(Date.parse('2026-11-21T16:00:00.5Z'))).toBe('2026-11-22T00:00:00.500+08:00');
  });
});

describe('prepareBatch', () => {
  it('deduplicates by key (last wins) and replaces the children of every execution named', () => {
    const b = prepareBatch(
      batch({
        executions: [execution(1, { hours: 1 }), execution(2), execution(1, { hours: 2 })],
        ranks: [rank(1, 0, 'A', 1), rank(1, 0, 'B', 2)],
        sources: [source(10, 3, 'a.com')],
        cards: [card(4, 0)],
      }),
    );
    expect(b.executions.map((e) => [e.prompt_task_id, e.hours])).toEqual([
      [1, 2],
      [2, 9],
    ]);
    expect(b.ranks.map((r) => r.brand)).toEqual(['B']);
    const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);
    expect(sorted(b.replaced.ranks)).toEqual([1, 2, 3, 4]);
    expect(sorted(b.replaced.sources)).toEqual([1, 2, 3, 4]);
    expect(sorted(b.replaced.cards)).toEqual([1, 2, 3, 4]);
  });

  it('kept children are neither replaced nor written; the rest of the execution is', () => {
    const b = prepareBatch(
      batch({
        executions: [execution(1), execution(2)],
        sources: [source(10, 1, 'a.com'), source(20, 2, 'b.com')],
        screenshots: [screenshot(1), screenshot(2)],
        products: [products(1), products(2)],
        cards: [card(1, 0), card(2, 0)],
        kept: [
          { prompt_task_id: 1, child: 'sources' },
          { prompt_task_id: 2, child: 'screenshot' },
          { prompt_task_id: 2, child: 'products' },
        ],
      }),
    );
    expect(b.replaced.ranks).toEqual([1, 2]);
    expect(b.replaced.sources).toEqual([2]);
    expect(b.replaced.cards).toEqual([1]);
    expect(b.sources.map((s) => s.source_id)).toEqual([20]);
    expect(b.screenshots.map((s) => s.prompt_task_id)).toEqual([1]);
    expect(b.products.map((p) => p.prompt_task_id)).toEqual([1]);
    expect(b.cards.map((c) => c.prompt_task_id)).toEqual([1]);
    expect(b.keys.sort()).toEqual([1, 2]);
  });
});
