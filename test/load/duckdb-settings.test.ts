/**
 * DuckDB knowledge stays in the load layer: the engine's settings come from what the caller
 * passes (the config), and removing a DuckDB warehouse (file and WAL) is the load layer's job.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { openMigratedWarehouse } from '../../src/app-warehouse.ts';
import { loadConfig } from '../../src/config.ts';
import { openWarehouse, removeDuckDBWarehouse, RUN_DUCKDB_THREADS } from '../../src/load/index.ts';
import { silentLogger } from '../../src/log.ts';
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

  it.each([
    ['a run, threads not set', { run: true }, {}, RUN_DUCKDB_THREADS],
    ['a run, threads set', { run: true }, { GEO_DUCKDB_THREADS: '2' }, 2],
    ['another command, threads set', {}, { GEO_DUCKDB_THREADS: '3' }, 3],
    ['another command, threads not set', {}, {}, 'DuckDB’s own'],
  ] as const)('%s: DuckDB runs with the threads due', async (_label, opts, env, expected) => {
    const config = loadConfig({ env: { ...env, GEO_WAREHOUSE: db.target } });
    const threadsOf = async (w: { query(sql: string): Promise<Record<string, unknown>[]> }) =>
      (await w.query(`SELECT current_setting('threads') AS t`))[0]!.t;
    let own: unknown = expected;
    if (expected === 'DuckDB’s own') {
      const plain = await openWarehouse(db.target, {});
      own = await threadsOf(plain);
      await plain.close();
    }
    const w = await openMigratedWarehouse(config, silentLogger, opts);
    try {
      expect(await threadsOf(w)).toBe(own);
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
