/**
 * Warehouse targets for tests that loop over both dialects: a fresh DuckDB file, or a fresh
 * PostgreSQL database created for the test and dropped after (helpers in duckdb.ts and
 * postgres.ts). PostgreSQL unreachable: under CI=true importing this module fails loudly;
 * elsewhere the PostgreSQL targets are skipped with one message.
 */
import { createTempDuckDB, type TempDuckDB } from './duckdb.ts';
import { createTestDatabase, postgresReachable, type TestDatabase } from './postgres.ts';

// Known before any describe() is collected, so suites can skip with describe.skipIf.
const postgresUp = await postgresReachable();

export interface WarehouseTarget {
  dialect: 'duckdb' | 'postgres';
  /** True when the target cannot be had here and the suite should be skipped. */
  skip: boolean;
  /** Creates the empty warehouse; returns its GEO_WAREHOUSE value. */
  create(): Promise<string>;
  drop(): Promise<void>;
}

export function duckdbTarget(name: string): WarehouseTarget {
  let db: TempDuckDB | undefined;
  return {
    dialect: 'duckdb',
    skip: false,
    async create() {
      db = createTempDuckDB(name);
      return db.target;
    },
    async drop() {
      db?.remove();
    },
  };
}

export function postgresTarget(_name: string): WarehouseTarget {
  let db: TestDatabase | undefined;
  return {
    dialect: 'postgres',
    skip: !postgresUp,
    async create() {
      db = await createTestDatabase();
      return db.url;
    },
    async drop() {
      await db?.drop().catch(() => undefined);
    },
  };
}

export function warehouseTargets(name: string): WarehouseTarget[] {
  return [duckdbTarget(name), postgresTarget(name)];
}
