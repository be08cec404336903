/**
 * The table description (src/load/tables.ts) against the DDL that `migrate` applies, on both
 * dialects: every table of schema `geo`, every column in order with its type and nullability,
 * every primary key. A column added to one DDL file and forgotten in the description (or the
 * other file) fails here; so does one removed, which the second test proves on a copy of each
 * DDL with a column left out.
 */
import { readFile, readdir } from 'node:fs/promises';
import { DuckDBInstance, quotedString } from '@duckdb/node-api';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openWarehouse, type Warehouse } from '../../src/load/index.ts';
import { sqlDirectory } from '../../src/load/migrate.ts';
import { GEO_TABLES, type ColumnKind } from '../../src/load/tables.ts';
import type { Dialect } from '../../src/load/warehouse.ts';
import { createTempDuckDB } from '../helpers/duckdb.ts';
import { createTestDatabase, postgresReachable } from '../helpers/postgres.ts';

const pgUp = await postgresReachable();

/** How each catalog spells the type of each kind. */
const CATALOG_TYPE: Record<Dialect, Record<ColumnKind, string>> = {
  postgres: {
    bigint: 'bigint',
    integer: 'integer',
    double: 'double precision',
    boolean: 'boolean',
    text: 'text',
    date: 'date',
    timestamptz: 'timestamp with time zone',
    money: 'numeric(18,4)',
    json: 'jsonb',
  },
  duckdb: {
    bigint: 'BIGINT',
    integer: 'INTEGER',
    double: 'DOUBLE',
    boolean: 'BOOLEAN',
    text: 'VARCHAR',
    date: 'DATE',
    timestamptz: 'TIMESTAMP WITH TIME ZONE',
    money: 'DECIMAL(18,4)',
    json: 'JSON',
  },
};

/** One line per column and per primary key, in a form both sides can be compared in. */
type Catalog = string[];

const COLUMNS_SQL: Record<Dialect, string> = {
  postgres: `SELECT table_name AS t, column_name AS c,
      CASE WHEN data_type = 'numeric' THEN 'numeric(' || numeric_precision || ',' || numeric_scale || ')'
           ELSE data_type END AS type,
      is_nullable = 'YES' AS nullable
    FROM information_schema.columns WHERE table_schema = $1
      AND table_name IN (SELECT table_name FROM information_schema.tables
                         WHERE table_schema = $1 AND table_type = 'BASE TABLE')
    ORDER BY table_name, ordinal_position`,
  duckdb: `SELECT table_name AS t, column_name AS c, data_type AS type, is_nullable AS nullable
    FROM duckdb_columns() WHERE schema_name = $1 AND database_name = current_database()
      AND table_name IN (SELECT table_name FROM duckdb_tables()
                         WHERE schema_name = $1 AND database_name = current_database())
    ORDER BY table_name, column_index`,
};

const KEYS_SQL: Record<Dialect, string> = {
  postgres: `SELECT tc.table_name AS t, string_agg(k.column_name, ',' ORDER BY k.ordinal_position) AS cols
    FROM information_schema.table_constraints tc
    JOIN information_schema.key_column_usage k
      ON k.constraint_schema = tc.constraint_schema AND k.constraint_name = tc.constraint_name
    WHERE tc.table_schema = $1 AND tc.constraint_type = 'PRIMARY KEY' GROUP BY tc.table_name`,
  duckdb: `SELECT table_name AS t, array_to_string(constraint_column_names, ',') AS cols
    FROM duckdb_constraints() WHERE schema_name = $1 AND database_name = current_database()
      AND constraint_type = 'PRIMARY KEY'`,
};

/** What the description says schema `geo` is on `dialect`. */
function described(dialect: Dialect): Catalog {
  const lines: string[] = [];
  for (const t of GEO_TABLES.filter((d) => d.dialects.includes(dialect))) {
    for (const c of t.columns) {
      lines.push(
        `${t.table}.${c.name} ${CATALOG_TYPE[dialect][c.kind]}${c.nullable ? ' NULL' : ' NOT NULL'}`,
      );
    }
    if (t.primaryKey.length > 0) lines.push(`${t.table} PRIMARY KEY (${t.primaryKey.join(',')})`);
  }
  return lines.sort();
}

/** What the catalog of the warehouse says schema `schema` is. */
async function catalog(w: Warehouse, schema = 'geo'): Promise<Catalog> {
  const columns = await w.query(COLUMNS_SQL[w.dialect], [schema]);
  const keys = await w.query(KEYS_SQL[w.dialect], [schema]);
  const lines = columns.map(
    (r) => `${String(r.t)}.${String(r.c)} ${String(r.type)}${r.nullable ? ' NULL' : ' NOT NULL'}`,
  );
  for (const k of keys) lines.push(`${String(k.t)} PRIMARY KEY (${String(k.cols)})`);
  return lines.sort();
}

/** The lines only one side has: what drifted. */
function drift(expected: Catalog, actual: Catalog): { missing: string[]; unexpected: string[] } {
  return {
    missing: expected.filter((l) => !actual.includes(l)),
    unexpected: actual.filter((l) => !expected.includes(l)),
  };
}

/** A fresh target of the dialect whose schema `geo` was created by `ddl` (no migrate). */
async function targetWithDdl(dialect: Dialect, ddl: string, cleanup: (() => Promise<void>)[]) {
  if (dialect === 'postgres') {
    const db = await createTestDatabase();
    cleanup.push(db.drop);
    const client = new pg.Client(db.url);
    await client.connect();
    try {
      await client.query(ddl);
    } finally {
      await client.end();
    }
    return db.url;
  }
  const db = createTempDuckDB('drift');
  cleanup.push(async () => db.remove());
  // Attached under another name: a file called geo.duckdb makes `geo.` ambiguous otherwise.
  const instance = await DuckDBInstance.create(':memory:');
  const c = await instance.connect();
  try {
    await c.run(`ATTACH ${quotedString(db.path)} AS probe; USE probe`);
    await c.run(ddl);
  } finally {
    c.closeSync();
    instance.closeSync();
  }
  return db.target;
}

async function freshTarget(dialect: Dialect, cleanup: (() => Promise<void>)[]) {
  if (dialect === 'postgres') {
    const db = await createTestDatabase();
    cleanup.push(db.drop);
    return db.url;
  }
  const db = createTempDuckDB('drift');
  cleanup.push(async () => db.remove());
  return db.target;
}

for (const dialect of ['postgres', 'duckdb'] as const) {
  describe.skipIf(dialect === 'postgres' && !pgUp)(`schema drift (${dialect})`, () => {
    const cleanup: (() => Promise<void>)[] = [];
    afterAll(async () => {
      for (const drop of cleanup) await drop();
    });

    it('the description matches what migrate creates: tables, columns, types, nullability, keys', async () => {
      const w = await openWarehouse(await freshTarget(dialect, cleanup), { migrate: true });
      try {
        expect(drift(described(dialect), await catalog(w))).toEqual({ missing: [], unexpected: [] });
      } finally {
        await w.close();
      }
    });

    it('a column left out of the DDL is caught', async () => {
      const ddl = await readFile(`${sqlDirectory(dialect)}001_init.sql`, 'utf8');
      const without = ddl.replace(/^\s+answer\s+\w+,\n/m, '');
      expect(without).not.toEqual(ddl);
      // Every later migration as it is, so that only the removed column differs.
      const later = (await readdir(sqlDirectory(dialect)))
        .filter((f) => /^\d+_.+\.sql$/.test(f) && f !== '001_init.sql')
        .sort();
      const rest = await Promise.all(later.map((f) => readFile(`${sqlDirectory(dialect)}${f}`, 'utf8')));
      // The ledger migrate would add (before 008, which writes a row into it), so that only the
      // removed column differs.
      const ledger = `CREATE TABLE geo.schema_migrations (version TEXT PRIMARY KEY, name TEXT NOT NULL,
        applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`;
      const w = await openWarehouse(
        await targetWithDdl(dialect, [without, ledger, ...rest].join(';\n'), cleanup),
      );
      try {
        const d = drift(described(dialect), await catalog(w));
        const type = CATALOG_TYPE[dialect].text;
        expect(d).toEqual({ missing: [`prompt_executions.answer ${type} NULL`], unexpected: [] });
      } finally {
        await w.close();
      }
    });
  });
}
