/**
 * DuckDB's out-of-memory error as the one line naming GEO_DUCKDB_MEMORY_LIMIT: which errors are
 * DuckDB running out of memory, the limit each names, and the value it suggests.
 */
import { describe, expect, it } from 'vitest';
import { outOfMemoryError, withMemoryLimit } from '../../src/load/duckdb/out-of-memory.ts';
import { DuckDBOutOfMemoryError, suggestedMemoryLimit } from '../../src/load/errors.ts';

const HINT =
  "\n\nPossible solutions:\n* Reducing the number of threads (SET threads=X)\n* Increasing the memory limit (SET memory_limit='...GB')\n";

describe('suggestedMemoryLimit', () => {
  it.each([
    ['128MB', '1GB'],
    ['1MB', '1GB'],
    ['600MB', '2GB'],
    ['1GB', '2GB'],
    ['2GB', '4GB'],
    ['1.5GB', '3GB'],
    ['1GiB', '3GB'],
    ['122.0MiB', '1GB'],
    ['nonsense', '1GB'],
  ])('%s -> %s', (limit, suggested) => {
    expect(suggestedMemoryLimit(limit)).toBe(suggested);
  });
});

describe('withMemoryLimit / outOfMemoryError', () => {
  it.each([
    [`Out of Memory Error: could not allocate block of size 256.0 KiB (121.8 MiB/122.0 MiB used)${HINT}`],
    [`Out of Memory Error: failed to pin block of size 256.0 KiB (121.8 MiB/122.0 MiB used)${HINT}`],
    [`Failed to append: could not allocate block of size 32.0 KiB (954.0 KiB/976.5 KiB used)${HINT}`],
  ])('names the setting for DuckDB running out: %j', (message) => {
    const e = withMemoryLimit(new Error(message), '128MB');
    expect(e).toBeInstanceOf(DuckDBOutOfMemoryError);
    expect((e as Error).message).toBe(
      'DuckDB ran out of memory at its limit of 128MB (GEO_DUCKDB_MEMORY_LIMIT): raise it, e.g. GEO_DUCKDB_MEMORY_LIMIT=1GB',
    );
    expect((e as Error).cause).toBeInstanceOf(Error);
  });

  it.each([
    ['Constraint Error: Duplicate key "id: 1" violates primary key constraint'],
    ['out of memory'], // PostgreSQL's (SQLSTATE 53200): not DuckDB's pool, no setting of ours raises it
    ['IO Error: Could not set lock on file "geo.duckdb"'],
  ])('leaves other errors as they are: %j', (message) => {
    const e = new Error(message);
    expect(withMemoryLimit(e, '128MB')).toBe(e);
    expect(outOfMemoryError(e)).toBeUndefined();
  });

  it('finds the named error under a wrapper, and names the limit DuckDB reports when none did', () => {
    const named = new DuckDBOutOfMemoryError('2GB');
    expect(outOfMemoryError(new Error('report failed', { cause: named }))).toBe(named);
    const raw = outOfMemoryError(
      new Error(
        `Out of Memory Error: failed to allocate data of size 16.0 MiB (17.9 MiB/30.5 MiB used)${HINT}`,
      ),
    );
    expect(raw?.message).toBe(
      'DuckDB ran out of memory at its limit of 30.5MiB (GEO_DUCKDB_MEMORY_LIMIT): raise it, e.g. GEO_DUCKDB_MEMORY_LIMIT=1GB',
    );
    expect(outOfMemoryError(new Error('Out of Memory Error: no figures'))?.message).toBe(
      'DuckDB ran out of memory at its limit (GEO_DUCKDB_MEMORY_LIMIT): raise it, e.g. GEO_DUCKDB_MEMORY_LIMIT=1GB',
    );
  });
});
