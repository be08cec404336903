/** export and report, the pure parts: type mapping, table choice, SQL filters, brand choice. */
import { describe, expect, it } from 'vitest';
import { duckdbType } from '../../src/export/postgres-source.ts';
import { exportSelect, parseTables } from '../../src/export/tables.ts';
import { DATA_TABLES } from '../../src/load/warehouse.ts';
import { escapeHtml } from '../../src/report/html.ts';
import { topBrandsPerEngine } from '../../src/report/index.ts';
import { filterSql } from '../../src/report/queries.ts';

describe('duckdbType (PostgreSQL column type -> DuckDB type of the export)', () => {
  it.each([
    ['bigint', 'BIGINT'],
    ['integer', 'INTEGER'],
    ['smallint', 'SMALLINT'],
    ['boolean', 'BOOLEAN'],
    ['double precision', 'DOUBLE'],
    ['real', 'FLOAT'],
    ['date', 'DATE'],
    ['timestamp with time zone', 'TIMESTAMPTZ'],
    ['timestamp without time zone', 'TIMESTAMP'],
    ['numeric(18,4)', 'DECIMAL(18, 4)'],
    ['numeric(40,2)', 'VARCHAR'],
    ['jsonb', 'JSON'],
    ['json', 'JSON'],
    ['text', 'VARCHAR'],
    ['character varying(20)', 'VARCHAR'],
    ['tsvector', 'VARCHAR'],
  ])('%s -> %s', (pg, duck) => expect(duckdbType(pg)).toBe(duck));
});

describe('parseTables', () => {
  it.each([
    [undefined, [...DATA_TABLES]],
    ['deductions,prompt_executions', ['prompt_executions', 'deductions']],
    [' product_cards , ', ['product_cards']],
  ])('%j -> %j', (list, tables) => expect(parseTables(list)).toEqual(tables));

  it.each([
    ['nope', /unknown table\(s\) nope; choose from monitoring_tasks, platform_tasks/],
    [',', /no table given/],
  ])('%j is refused', (list, message) => expect(() => parseTables(list)).toThrow(message));
});

describe('exportSelect', () => {
  const dialect = { q: (t: string) => `src.geo.${t}`, shanghaiDay: (c: string) => `DAY(${c})` };
  it.each([
    ['platform_tasks', {}, 'SELECT t.* FROM src.geo.platform_tasks t', []],
    [
      'prompt_executions',
      { from: '2026-11-01' },
      'SELECT t.*, t.date_time AS day FROM src.geo.prompt_executions t WHERE t.date_time >= CAST($1 AS DATE)',
      ['2026-11-01'],
    ],
    [
      'execution_ranks',
      { from: '2026-11-01', to: '2026-11-02' },
      'SELECT t.*, e.date_time AS day FROM src.geo.execution_ranks t JOIN src.geo.prompt_executions e ON e.prompt_task_id = t.prompt_task_id WHERE e.date_time >= CAST($1 AS DATE) AND e.date_time <= CAST($2 AS DATE)',
      ['2026-11-01', '2026-11-02'],
    ],
    [
      'deductions',
      { to: '2026-11-02' },
      'SELECT t.*, DAY(t.created_at) AS day FROM src.geo.deductions t WHERE DAY(t.created_at) <= CAST($1 AS DATE)',
      ['2026-11-02'],
    ],
  ] as const)('%s %j', (table, range, sql, params) => {
    expect(exportSelect(table, range, dialect)).toEqual({ sql, params });
  });
});

describe('report filterSql', () => {
  it.each([
    [{}, 1, '', []],
    [{ from: '2026-11-01' }, 1, 'AND date >= CAST($1 AS DATE)', ['2026-11-01']],
    [
      { from: '2026-11-01', to: '2026-11-03', customers: [7, 8] },
      2,
      'AND date >= CAST($2 AS DATE) AND date <= CAST($3 AS DATE) AND customer_id IN ($4, $5)',
      ['2026-11-01', '2026-11-03', 7, 8],
    ],
    [{ customers: [] }, 1, '', []],
  ])('%j from $%i', (filter, first, sql, params) => {
    expect(filterSql(filter, 'date', first)).toEqual({ sql, params });
  });
});

describe('topBrandsPerEngine', () => {
  it('keeps each platform its brands with the most valid ranks, ties by name', () => {
    const p = (engine: string, brand: string, valid_ranks: number, date = '2026-11-01') => ({
      engine,
      brand,
      valid_ranks,
      date,
      avg_position: 1,
    });
    const ranks = [
      p('kimi', '小米', 2),
      p('kimi', '小米', 3, '2026-11-02'),
      p('kimi', '华为', 4),
      p('kimi', 'OPPO', 1),
      p('deepseek', 'B', 1),
      p('deepseek', 'A', 1),
    ];
    expect([...topBrandsPerEngine(ranks, 2)]).toEqual([
      ['deepseek', ['A', 'B']],
      ['kimi', ['小米', '华为']],
    ]);
  });
});

it('escapeHtml escapes markup and quotes', () => {
  expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
});
