/**
 * DuckDB for tests: a database file in a fresh temp directory, removed after.
 *
 *   const target = withTempDuckDB();   // registers beforeAll/afterAll
 *   it('...', async () => { const w = await openWarehouse(target()); ... });
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

export interface TempDuckDB {
  /** `duckdb:<dir>/geo.duckdb` */
  target: string;
  /** The database file. */
  path: string;
  dir: string;
  remove(): void;
}

export function createTempDuckDB(label = 'load'): TempDuckDB {
  const dir = mkdtempSync(join(tmpdir(), `geo-${label}-`));
  const path = join(dir, 'geo.duckdb');
  return { target: `duckdb:${path}`, path, dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A fresh DuckDB target for the enclosing describe (or file); returns a getter of it. */
export function withTempDuckDB(label?: string): () => string {
  let db: TempDuckDB | undefined;
  beforeAll(() => {
    db = createTempDuckDB(label);
  });
  afterAll(() => {
    db?.remove();
  });
  return () => {
    if (!db) throw new Error('withTempDuckDB(): the file exists from beforeAll on');
    return db.target;
  };
}
