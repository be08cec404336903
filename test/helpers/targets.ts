/**
 * Warehouse targets for tests that loop over both dialects: a fresh DuckDB file, or a fresh
 * PostgreSQL database created for the test and dropped after. PostgreSQL unreachable: under
 * CI=true the tests fail loudly; elsewhere they are skipped with one clear message.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const PG_ADMIN_URL = process.env.GEO_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface WarehouseTarget {
  dialect: 'duckdb' | 'postgres';
  /** True when the target cannot be had here and the suite should be skipped. */
  skip: boolean;
  /** Creates the empty warehouse; returns its GEO_WAREHOUSE value. */
  create(): Promise<string>;
  drop(): Promise<void>;
}

let pgReachable: boolean | null = null;

/**
 * Probed once per test file, synchronously (describe.skipIf needs the answer at collection
 * time): a child process tries to connect, so no event-loop trickery is needed.
 */
export function postgresAvailable(): boolean {
  if (pgReachable !== null) return pgReachable;
  try {
    execFileSync(
      process.execPath,
      [
        '-e',
        `const pg=require('pg');const c=new pg.Client(${JSON.stringify(PG_ADMIN_URL)});c.connect().then(()=>c.end()).then(()=>process.exit(0),()=>process.exit(1))`,
      ],
      { stdio: 'ignore', timeout: 10_000 },
    );
    pgReachable = true;
  } catch {
    pgReachable = false;
  }
  if (!pgReachable) {
    const message = `PostgreSQL is not reachable at ${PG_ADMIN_URL.replace(/:[^:@/]*@/, ':***@')}`;
    if (process.env.CI === 'true')
      throw new Error(`${message}: CI needs it (start it, or set GEO_TEST_PG_URL)`);
    console.warn(`${message}: skipping the PostgreSQL tests (set CI=true to make this an error)`);
  }
  return pgReachable;
}

export function duckdbTarget(name: string): WarehouseTarget {
  const dir = mkdtempSync(join(tmpdir(), `geo-${name}-`));
  return {
    dialect: 'duckdb',
    skip: false,
    async create() {
      return `duckdb:${join(dir, `${name}.duckdb`)}`;
    },
    async drop() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function postgresTarget(name: string): WarehouseTarget {
  const db = `geo_test_${name
    .replace(/[^a-z0-9]/gi, '_')
    .toLowerCase()
    .slice(0, 30)}_${randomBytes(4).toString('hex')}`;
  const admin = async <T>(fn: (c: pg.Client) => Promise<T>) => {
    const c = new pg.Client(PG_ADMIN_URL);
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };
  return {
    dialect: 'postgres',
    skip: !postgresAvailable(),
    async create() {
      // Identifiers cannot be parameters; `db` is built above from [a-z0-9_] only.
      await admin((c) => c.query(`CREATE DATABASE ${db}`));
      const url = new URL(PG_ADMIN_URL);
      url.pathname = `/${db}`;
      return url.toString();
    },
    async drop() {
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`)).catch(() => undefined);
    },
  };
}

export function warehouseTargets(name: string): WarehouseTarget[] {
  return [duckdbTarget(name), postgresTarget(name)];
}
