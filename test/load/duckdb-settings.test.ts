/**
 * DuckDB knowledge stays in the load layer: the engine's settings come from what the caller
 * passes (the config), and removing a DuckDB warehouse (file and WAL) is the load layer's job.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { openWarehouse, removeDuckDBWarehouse } from '../../src/load/index.ts';
import { createTempDuckDB } from '../helpers/duckdb.ts';

describe('DuckDB settings and removal', () => {
  const db = createTempDuckDB('settings');
  afterAll(() => db.remove());

  it('opens with the memory limit, checkpoint threshold, spill directory and threads it is given', async () => {
    const w = await openWarehouse(db.target, {
      duckdb: {
        memoryLimit: '100MB',
        checkpointThreshold: '48MB',
        tempDirectory: `${db.dir}/spill`,
        threads: 1,
      },
    });
    try {
      const [s] = await w.query(
        `SELECT current_setting('memory_limit') AS memory, current_setting('temp_directory') AS temp,
           current_setting('threads') AS threads, current_setting('checkpoint_threshold') AS checkpoint`,
      );
      // DuckDB reports sizes in its own units (100MB = 95.3 MiB).
      expect(s).toEqual({ memory: '95.3 MiB', temp: `${db.dir}/spill`, threads: 1, checkpoint: '45.7 MiB' });
    } finally {
      await w.close();
    }
  });

  it('removeDuckDBWarehouse deletes the file and its WAL; a PostgreSQL target is left alone', async () => {
    const w = await openWarehouse(db.target, { migrate: true });
    await w.close();
    writeFileSync(`${db.path}.wal`, 'left over');
    expect(existsSync(db.path)).toBe(true);
    expect(await removeDuckDBWarehouse(db.target)).toBe(true);
    expect(existsSync(db.path)).toBe(false);
    expect(existsSync(`${db.path}.wal`)).toBe(false);
    expect(await removeDuckDBWarehouse('postgres://nobody@127.0.0.1:1/none')).toBe(false);
  });
});
