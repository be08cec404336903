/**
 * SIGINT/SIGTERM on a DuckDB warehouse, through the real CLI:
 * - `export` stopped once its files are written and before any is moved into place (the test
 *   hook GEO_SYNC_TEST_EXPORT_PAUSE holds it there): 130, the lake exactly as the previous export
 *   left it (the same files, by inode), no scratch folder, no lock file; the next export runs
 *   without a note about leftovers.
 * - every command that opens the file, stopped while it waits for the file another process (a BI
 *   tool) holds: 130 at once, no lock file, and the file opens as soon as that process is done.
 * One simulator and one warehouse for the file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { runCli, startCli } from '../helpers/cli.ts';
import { createTempDuckDB, type TempDuckDB } from '../helpers/duckdb.ts';
import { expectNoDuckDBLock, expectStopped, stopAt } from '../helpers/signals.ts';
import { syncOnce, withWarehouse } from '../helpers/sync.ts';
import { killOnExit } from '../helpers/children.ts';

/** Every file under `dir` with its inode: a file moved keeps it, a file written anew has another. */
function inodes(dir: string): Map<string, number> {
  const out = new Map<string, number>();
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      const s = statSync(p);
      if (s.isDirectory()) walk(p);
      else out.set(p.slice(dir.length), s.ino);
    }
  };
  walk(dir);
  return out;
}

describe('a signal on a DuckDB warehouse', () => {
  let sim: RunningSimulator;
  let db: TempDuckDB;
  let env: Record<string, string>;
  let lake: string;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 23, days: 2, executionsPerDay: 6 });
    db = createTempDuckDB('signals-duckdb');
    await syncOnce({ baseUrl: sim.url, target: db.target, dates: sim.world.dates() });
    env = { GEO_BASE_URL: sim.url, GEO_API_KEY: 'sim-key', GEO_WAREHOUSE: db.target };
    lake = mkdtempSync(join(tmpdir(), 'geo-signals-lake-'));
  });
  afterAll(async () => {
    await sim?.close();
    db?.remove();
    if (lake) rmSync(lake, { recursive: true, force: true });
  });

  it('export stopped with its files written, before moving them: 130, the lake as it was; the next export is clean', async () => {
    const args = ['export', '--format', 'parquet', '--out', lake];
    const first = await runCli(args, env);
    expect(first.code, first.stderr).toBe(0);
    const previous = inodes(lake);
    const r = await stopAt(
      startCli(args, { ...env, GEO_SYNC_TEST_EXPORT_PAUSE: 'written:1' }),
      /^paused at written:1$/,
      'SIGTERM',
    );
    expectStopped(r);
    expect(inodes(lake)).toEqual(previous);
    expect(readdirSync(lake).filter((n) => n.startsWith('.'))).toEqual([]);
    const next = await runCli(args, env);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).not.toMatch(/removed \d+ scratch folder/);
    expect(existsSync(join(lake, '.geo-sync-export.lock'))).toBe(false);
  });

  it('a second signal exits at once, even while the files move; the next export puts the lake back', async () => {
    const args = ['export', '--format', 'parquet', '--out', lake];
    const previous = inodes(lake);
    // Held between writing the moves' journal and the first rename: the first signal does not end it.
    const p = startCli(args, { ...env, GEO_SYNC_TEST_EXPORT_PAUSE: 'journal:1' });
    await p.waitForLog(/^paused at journal:1$/);
    p.child.kill('SIGTERM');
    await p.waitForLog(/^stopping on SIGTERM/);
    p.child.kill('SIGTERM');
    const r = await p.done;
    expect(r.code, r.stderr).toBe(130);
    const next = await runCli(args, env);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toContain(`note: removed 1 scratch folder(s) that stopped exports left in ${lake}`);
    expect(readdirSync(lake).filter((n) => n.startsWith('.'))).toEqual([]);
    // Whole again: as many files as every export of this warehouse writes.
    expect(inodes(lake).size).toBe(previous.size);
  });

  describe('while another process has the file open', () => {
    let holder: ChildProcess | undefined;
    beforeAll(async () => {
      // A BI tool holding the file open read-write, for longer than these tests.
      const script = `
        import { DuckDBInstance } from '@duckdb/node-api';
        const db = await DuckDBInstance.create(process.argv[1]);
        process.stdout.write('held\\n');
        setTimeout(() => { db.closeSync(); process.exit(0); }, 120000);`;
      holder = killOnExit(
        spawn(process.execPath, ['--input-type=module', '-e', script, db.path], {
          stdio: ['ignore', 'pipe', 'inherit'],
        }),
      );
      await new Promise<void>((resolve) => holder!.stdout!.once('data', () => resolve()));
    });
    afterAll(() => {
      holder?.kill('SIGKILL');
    });

    const commands: [string, string[], NodeJS.Signals][] = [
      ['check', ['check'], 'SIGTERM'],
      ['report', ['report', '--out', 'REPORT'], 'SIGINT'],
      ['state reset', ['state', 'reset', '--from', '2026-01-01', '--to', '2026-01-01'], 'SIGTERM'],
      ['rollups refresh', ['rollups', 'refresh', '--no-progress'], 'SIGINT'],
      ['migrate', ['migrate'], 'SIGTERM'],
      [
        'backfill',
        ['backfill', '--from', '2026-01-01', '--to', '2026-01-02', '--wait-for-lock', '60'],
        'SIGINT',
      ],
      ['schedule (starting)', ['schedule', '--cron', '0 0 1 1 *'], 'SIGTERM'],
    ];

    it.each(commands)('%s: 130 at once, no lock file', async (_, args, signal) => {
      const out = join(lake, 'report.html');
      const r = await stopAt(
        startCli(
          args.map((a) => (a === 'REPORT' ? out : a)),
          env,
        ),
        /"msg":"waiting for the DuckDB file, which another process has open"/,
        signal,
      );
      expectStopped(r);
      expectNoDuckDBLock(db.target);
      expect(existsSync(out)).toBe(false);
    });

    it('once that process is done, the file opens: nothing was left to clear', async () => {
      holder!.kill('SIGTERM');
      await new Promise((resolve) => holder!.once('exit', resolve));
      const runs = await withWarehouse(db.target, (w) => w.query('SELECT count(*) AS n FROM geo.sync_runs'));
      expect(Number(runs[0]!.n)).toBeGreaterThan(0);
      expectNoDuckDBLock(db.target);
    });
  });
});
