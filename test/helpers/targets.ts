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

/** Every warehouse `create` made is removed by `drop` (a file may create one per test). */
export function duckdbTarget(name: string): WarehouseTarget {
  const made: TempDuckDB[] = [];
  return {
    dialect: 'duckdb',
    skip: false,
    async create() {
      const db = createTempDuckDB(name);
      made.push(db);
      return db.target;
    },
    async drop() {
      for (const db of made.splice(0)) db.remove();
    },
  };
}

export function postgresTarget(_name: string): WarehouseTarget {
  const made: TestDatabase[] = [];
  return {
    dialect: 'postgres',
    skip: !postgresUp,
    async create() {
      const db = await createTestDatabase();
      made.push(db);
      return db.url;
    },
    async drop() {
      for (const db of made.splice(0)) await db.drop().catch(() => undefined);
    },
  };
}

export function warehouseTargets(name: string): WarehouseTarget[] {
  return [duckdbTarget(name), postgresTarget(name)];
}
