/** The per-table checks are built from the table description: every table is in them. */
import { describe, expect, it } from 'vitest';
import { GEO_TABLES } from '../../src/load/tables.ts';
import { childrenHaveExecutionSql, keysUniqueSql } from '../../src/quality/table-checks.ts';

describe('table checks', () => {
  it.each(['postgres', 'duckdb'] as const)('keys_unique checks every table %s has, by its key', (dialect) => {
    const sql = keysUniqueSql(dialect);
    for (const t of GEO_TABLES) {
      const line = sql.split('\n').find((l) => l.includes(`FROM geo.${t.table} `));
      if (t.dialects.includes(dialect)) expect(line, t.table).toContain(`GROUP BY ${t.unique.join(', ')}`);
      else expect(line, t.table).toBeUndefined();
    }
    expect(sql.trimEnd().endsWith('ORDER BY 1, 2')).toBe(true);
  });

  it('children_have_execution checks every table keyed by an execution, fingerprints included', () => {
    const sql = childrenHaveExecutionSql();
    for (const table of [
      'execution_ranks',
      'execution_sources',
      'execution_screenshots',
      'execution_products',
      'product_cards',
      'execution_fingerprints',
    ])
      expect(sql).toContain(`FROM geo.${table} c`);
  });
});
