/**
 * An export killed with SIGKILL while it replaces the lake's folders. Each kill
 * point is reached deterministically (GEO_SYNC_TEST_EXPORT_PAUSE stops the real `geo-sync export`
 * there, then the test kills it). After every kill each table's folder and each day folder holds
 * either the previous export's files or the new export's, never a mix and never nothing (but the
 * one folder between its two renames); the next export puts the previous files back before it
 * writes, removes the killed export's scratch folder, and ends with the warehouse's rows.
 *
 * DuckDB only: moving the files does not depend on the warehouse the rows came from.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA_TABLES } from '../../src/load/warehouse.ts';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { runCli, startCli } from '../helpers/cli.ts';
import { createTempDuckDB, type TempDuckDB } from '../helpers/duckdb.ts';
import { syncOnce, withWarehouse } from '../helpers/sync.ts';

/** A folder's files, by name and inode: a file moved keeps its inode, a file written anew has another. */
type Files = Map<string, string>;

/** Every folder of the lake that an export replaces whole: `<table>` or `<table>/day=D`. */
function lake(dir: string): Map<string, Files> {
  const out = new Map<string, Files>();
  const files = (folder: string): Files =>
    new Map(
      readdirSync(folder)
        .filter((n) => statSync(join(folder, n)).isFile())
        .map((n) => [n, `${n}#${statSync(join(folder, n)).ino}`]),
    );
  for (const table of DATA_TABLES) {
    const folder = join(dir, table);
    if (!existsSync(folder)) continue;
    const days = readdirSync(folder).filter((n) => n.startsWith('day='));
    if (days.length === 0) out.set(table, files(folder));
    for (const d of days) out.set(`${table}/${d}`, files(join(folder, d)));
  }
  return out;
}

const scratchFolders = (dir: string) => readdirSync(dir).filter((n) => n.startsWith('.geo-sync-export-'));

describe('an export killed while it moves its files into place', () => {
  let sim: RunningSimulator;
  let db: TempDuckDB;
  let dir: string;
  let env: Record<string, string>;
  /** The lake as the first, complete export left it. */
  let previous: Map<string, Files>;

  beforeAll(async () => {
    db = createTempDuckDB('export-killed');
    sim = await startSimulator({ seed: 11, days: 2, executionsPerDay: 15 });
    await syncOnce({ baseUrl: sim.url, target: db.target, dates: sim.world.dates() });
    dir = mkdtempSync(join(tmpdir(), 'geo-export-killed-'));
    env = { GEO_WAREHOUSE: db.target };
    const first = await runCli(['export', '--format', 'parquet', '--out', dir], env);
    expect(first.code, first.stderr).toBe(0);
    previous = lake(dir);
    // The warehouse changes, so the next export's first day differs from the lake's.
    const [execution] = sim.world.executions(sim.world.allPlatformTasks()[0]!.task_id, sim.world.dates()[0]!);
    sim.world.mutations.setAnswer(execution!.prompt_task_id, 'an answer saved again');
    await syncOnce({ baseUrl: sim.url, target: db.target, dates: sim.world.dates(), force: true });
  }, 60_000);
  afterAll(async () => {
    await sim?.close();
    db?.remove();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Runs an export that stops at `point`, and kills it there with SIGKILL. */
  async function killedAt(point: string): Promise<void> {
    const p = startCli(['export', '--format', 'parquet', '--out', dir], {
      ...env,
      GEO_SYNC_TEST_EXPORT_PAUSE: point,
    });
    await p.waitForLog(new RegExp(`^paused at ${point}$`));
    p.child.kill('SIGKILL');
    const r = await p.done;
    expect(r.signal).toBe('SIGKILL');
  }

  /** The folders in the order an export moves them: tables in warehouse order, days ascending. */
  const moveOrder = () => [...previous.keys()].sort((a, b) => order(a) - order(b) || a.localeCompare(b));
  const order = (folder: string) => DATA_TABLES.indexOf(folder.split('/')[0] as (typeof DATA_TABLES)[number]);

  /**
   * Each folder holds the previous files or entirely new ones, never a mix: the first `moved`
   * folders (in move order) new, the rest as they were; `missing`: the one between its renames.
   */
  function expectOldOrNew(moved: number, missing = false): void {
    const now = lake(dir);
    moveOrder().forEach((folder, i) => {
      const files = previous.get(folder)!;
      if (missing && i === moved) {
        expect(now.has(folder), `${folder} between its renames`).toBe(false);
        return;
      }
      const got = now.get(folder);
      expect(got, `${folder} is missing`).toBeDefined();
      if (i >= moved) {
        expect(got, `${folder} as it was`).toEqual(files);
        return;
      }
      const old = [...files.values()];
      expect(
        [...got!.values()].filter((f) => old.includes(f)),
        `${folder} new`,
      ).toEqual([]);
      expect(got!.size, folder).toBeGreaterThan(0);
    });
    // The warehouse holds the same days: nothing but those folders.
    expect([...now.keys()].filter((f) => !previous.has(f))).toEqual([]);
  }

  /** The next export, stopped once it has cleaned up and written its own files: the previous lake. */
  async function expectPutBack(): Promise<void> {
    await killedAt('written:1');
    expect(lake(dir)).toEqual(previous);
    // Only the scratch folder of the export just killed, none of those before it.
    expect(scratchFolders(dir)).toHaveLength(1);
  }

  it.each([
    // Files written, nothing moved yet.
    ['journal:1', 0, false],
    // prompt_executions' first day set aside, its new folder not yet in (the moves so far:
    // monitoring_tasks, platform_tasks): the kill that lost a day of the lake before.
    ['aside:3', 2, true],
    // Its first day replaced, its second not yet: the lake is half new, each folder whole.
    ['moved:3', 3, false],
    ['moved:12', 12, false],
  ])(
    'killed at %s: every folder old or new, and the next export puts the previous files back',
    async (point, moved, missing) => {
      await killedAt(point);
      expectOldOrNew(moved, missing);
      expect(scratchFolders(dir)).toHaveLength(1);
      await expectPutBack();
    },
  );

  it('killed once every folder is in place: the new files stay, the next export removes the old ones', async () => {
    await killedAt('committed:1');
    expectOldOrNew(previous.size);
    expect(scratchFolders(dir)).toHaveLength(1);
    previous = lake(dir);
    await expectPutBack();
  });

  it('the next export removes what killed ones left and writes the warehouse whole', async () => {
    const r = await runCli(['export', '--format', 'parquet', '--out', dir], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`note: removed 1 scratch folder(s) that stopped exports left in ${dir}`);
    expect(scratchFolders(dir)).toEqual([]);
    expect(existsSync(join(dir, '.geo-sync-export.lock'))).toBe(false);
    const expected = await withWarehouse(db.target, (w) =>
      w.query('SELECT prompt_task_id, answer FROM geo.prompt_executions ORDER BY prompt_task_id'),
    );
    const reader = createTempDuckDB('export-killed-reader');
    try {
      const files = await withWarehouse(reader.target, (w) =>
        w.query(
          `SELECT prompt_task_id, answer FROM read_parquet('${dir}/prompt_executions/**/*.parquet', hive_partitioning = true) ORDER BY prompt_task_id`,
        ),
      );
      expect(files).toEqual(expected);
      expect(files.map((f) => f.answer)).toContain('an answer saved again');
    } finally {
      reader.remove();
    }
  });

  it('a second export into the same folder while one runs exits 4, naming it', async () => {
    const p = startCli(['export', '--format', 'parquet', '--out', dir], {
      ...env,
      GEO_SYNC_TEST_EXPORT_PAUSE: 'written:1',
    });
    try {
      await p.waitForLog(/^paused at written:1$/);
      const r = await runCli(['export', '--format', 'csv', '--out', dir], env);
      expect(r.code, r.stderr).toBe(4);
      expect(r.stderr).toContain(
        `another geo-sync export writes into ${dir}: geo-sync export pid ${p.child.pid}`,
      );
      // It touched nothing: the running export's scratch folder is still there.
      expect(scratchFolders(dir)).toHaveLength(1);
    } finally {
      p.child.kill('SIGKILL');
      await p.done;
    }
  });
});
