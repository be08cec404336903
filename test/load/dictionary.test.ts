/**
 * The data dictionary: docs/data-dictionary.md is what src/load/dictionary.ts
 * generates; every table, view and column of a migrated warehouse has its description, and
 * `migrate` put it in the database as COMMENT ON, on both warehouses.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DICTIONARY, dictionaryFor, renderDataDictionary } from '../../src/load/dictionary.ts';
import { openWarehouse, type Warehouse } from '../../src/load/index.ts';
import type { Dialect } from '../../src/load/warehouse.ts';
import { createTempDuckDB } from '../helpers/duckdb.ts';
import { createTestDatabase, postgresReachable } from '../helpers/postgres.ts';

const pgUp = await postgresReachable();

describe('docs/data-dictionary.md', () => {
  it('is what src/load/dictionary.ts generates (run `npm run docs:dictionary` after changing it)', () => {
    const file = readFileSync(new URL('../../docs/data-dictionary.md', import.meta.url), 'utf8');
    expect(file).toBe(renderDataDictionary());
  });

  it('every description is one line', () => {
    for (const [name, doc] of Object.entries(DICTIONARY)) {
      expect(doc.description, name).not.toMatch(/\n/);
      for (const [column, text] of Object.entries(doc.columns)) {
        expect(text.trim().length, `${name}.${column}`).toBeGreaterThan(0);
        expect(text, `${name}.${column}`).not.toMatch(/\n/);
      }
    }
  });
});

/** Every object of schema geo with its comment, and each column with its comment, as the database has them. */
const CATALOG_SQL: Record<Dialect, { objects: string; columns: string }> = {
  postgres: {
    objects: `SELECT c.relname AS name, CASE c.relkind WHEN 'v' THEN 'view' ELSE 'table' END AS kind,
                obj_description(c.oid, 'pg_class') AS comment
              FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = 'geo' AND c.relkind IN ('r', 'v', 'p') ORDER BY 1`,
    columns: `SELECT c.relname AS name, a.attname AS column_name, col_description(c.oid, a.attnum) AS comment
              FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
              WHERE n.nspname = 'geo' AND c.relkind IN ('r', 'v', 'p') ORDER BY 1, a.attnum`,
  },
  duckdb: {
    objects: `SELECT table_name AS name, 'table' AS kind, comment FROM duckdb_tables() WHERE schema_name = 'geo'
              UNION ALL
              SELECT view_name, 'view', comment FROM duckdb_views() WHERE schema_name = 'geo' AND NOT internal
              ORDER BY 1`,
    columns: `SELECT table_name AS name, column_name, comment FROM duckdb_columns()
              WHERE schema_name = 'geo' ORDER BY table_name, column_index`,
  },
};

for (const dialect of ['duckdb', 'postgres'] as const) {
  describe.skipIf(dialect === 'postgres' && !pgUp)(`the dictionary in the database (${dialect})`, () => {
    let w: Warehouse;
    let drop: () => Promise<void> | void = () => undefined;

    beforeAll(async () => {
      if (dialect === 'postgres') {
        const db = await createTestDatabase();
        drop = () => db.drop();
        w = await openWarehouse(db.url, { migrate: true });
      } else {
        const db = createTempDuckDB('dictionary');
        drop = () => db.remove();
        w = await openWarehouse(db.target, { migrate: true });
      }
    });
    afterAll(async () => {
      await w?.close();
      await drop();
    });

    it('describes exactly the tables, views and columns the warehouse has, in their order', async () => {
      const objects = (await w.query(CATALOG_SQL[dialect].objects)) as { name: string; kind: string }[];
      expect(objects.map((o) => `${o.kind} ${o.name}`).sort()).toEqual(
        dictionaryFor(dialect)
          .map(([name, d]) => `${d.kind} ${name}`)
          .sort(),
      );
      const columns = (await w.query(CATALOG_SQL[dialect].columns)) as {
        name: string;
        column_name: string;
      }[];
      for (const [name, doc] of dictionaryFor(dialect)) {
        expect(
          columns.filter((c) => c.name === name).map((c) => c.column_name),
          name,
        ).toEqual(Object.keys(doc.columns));
      }
    });

    it('migrate applied it as COMMENT ON: every object and column carries its description', async () => {
      const objects = (await w.query(CATALOG_SQL[dialect].objects)) as {
        name: string;
        comment: string | null;
      }[];
      for (const o of objects) expect(o.comment, o.name).toBe(DICTIONARY[o.name]!.description);
      const columns = (await w.query(CATALOG_SQL[dialect].columns)) as {
        name: string;
        column_name: string;
        comment: string | null;
      }[];
      for (const c of columns)
        expect(c.comment, `${c.name}.${c.column_name}`).toBe(DICTIONARY[c.name]!.columns[c.column_name]);
      // A second migrate re-creates the views and their comments with them.
      await w.migrate();
      const [again] = (await w.query(
        CATALOG_SQL[dialect].columns.replace(
          'ORDER BY',
          dialect === 'postgres'
            ? "AND c.relname = 'citations_daily' ORDER BY"
            : "AND table_name = 'citations_daily' ORDER BY",
        ),
      )) as { comment: string | null }[];
      expect(again?.comment).toBe(DICTIONARY.citations_daily!.columns.date);
    });
  });
}
