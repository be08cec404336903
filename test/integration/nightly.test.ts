/**
 * The nightly loop. A scheduled-style run over the look-back window, the simulator's
 * world changed as a real service's does (a late answer, a re-saved answer, a late screenshot, a
 * renamed monitoring task, an execution deleted upstream, a child changed without its item), then
 * a second run: only the changed executions' children are requested, unchanged rows are not
 * rewritten, and the warehouse equals a fresh full sync (but for the child-only change, which
 * only `--reread` picks up). Over real sockets into both warehouses. The legacy per-execution
 * enrichments are off to keep it short: they are children like the others.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { createApi } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { silentLogger } from '../../src/log.ts';
import type { ApiPort } from '../../src/extract/port.ts';
import { UnauthorizedError } from '../../src/api/errors.ts';
import { formatVerify, verifyExecutions, verifyPassed } from '../../src/sync/verify.ts';
import { runCli } from '../helpers/cli.ts';
import { dumpData, rollupMismatches } from '../helpers/dump.ts';

/**
 * The tables a source kept behind an unchanged item (change detection's assumption) differs in
 * from a fresh sync: the sources, and the per-day aggregates counted from them.
 */
const FROM_SOURCES = ['execution_sources', 'rollup_domains_daily', 'rollup_executions_daily'];
const ALL_DAYS = ['2000-01-01', '2100-12-31'] as const;
import { SIMULATOR_PACE, syncOnce, withWarehouse } from '../helpers/sync.ts';
import { duckdbTarget, postgresTarget, warehouseTargets } from '../helpers/targets.ts';
import { ensureMissingAnswer, ensureWithoutScreenshot, executionsOn } from '../helpers/world.ts';

const SEARCHES = 'GET /api/v2/geo/prompt/searches';
const SCREENSHOT = 'GET /api/v2/geo/prompt/screenshot';
const PROMPTS = 'GET /api/v2/geo/task/prompts';

/** A scheduled run: the look-back window (the world's two days) re-read without --force. */
const scheduledRun = (sim: RunningSimulator, into: string, reread = false) =>
  syncOnce({
    baseUrl: sim.url,
    target: into,
    dates: sim.world.dates(),
    kind: 'schedule',
    reread,
    config: {
      lookbackDays: 1,
      enrich: {
        diagnosis: false,
        finance: false,
        taskConfig: false,
        legacySources: false,
        executionTimes: false,
      },
    },
  });

for (const target of warehouseTargets('nightly')) {
  describe.skipIf(target.skip)(`the nightly run into ${target.dialect}`, () => {
    const freshTarget = target.dialect === 'duckdb' ? duckdbTarget('nightly-fresh') : postgresTarget('fresh');
    let sim: RunningSimulator;
    let url: string;
    let dates: string[];

    beforeAll(async () => {
      url = await target.create();
      sim = await startSimulator({ seed: 21, days: 2, executionsPerDay: 24 });
      dates = sim.world.dates();
      // What the test picks, whatever the day drew: an execution without an answer, and one
      // listed without a screenshot that is neither of the two picked before it (below).
      ensureMissingAnswer(sim.world, dates);
      ensureWithoutScreenshot(sim.world, dates, 3);
    });
    afterAll(async () => {
      await sim?.close();
      await target.drop();
      await freshTarget.drop();
    });

    const nightly = (into = url, reread = false) => scheduledRun(sim, into, reread);
    const q = (sql: string, params: (string | number)[] = []) =>
      withWarehouse(url, (w) => w.query(sql, params));
    /** verify over every stored execution (a sample larger than the warehouse). */
    const check = async (port: (p: ApiPort) => ApiPort = (p) => p) => {
      const config = loadConfig({
        env: {},
        overrides: { baseUrl: sim.url, apiKey: 'sim-key', warehouse: url, ...SIMULATOR_PACE },
      });
      const api = createApi(config, silentLogger);
      try {
        return await withWarehouse(url, (w) =>
          verifyExecutions(port(api.port), w, {
            sample: 10_000,
            legacySources: false,
            executionTimes: false,
          }),
        );
      } finally {
        await api.close();
      }
    };
    const items = () => executionsOn(sim.world, dates);

    it('reads only what changed, leaves the rest untouched, and converges but for a child-only change', async () => {
      sim.stats.reset();
      const first = await nightly();
      expect(first.status).toBe('success');
      const all = items();
      expect(first.counters.executionsRead).toBe(all.length);
      expect(first.counters.executionsUnchanged).toBe(0);
      // A first read has nothing to delete, so no unit asks task/prompts.
      expect(sim.stats.byEndpoint[PROMPTS] ?? 0).toBe(0);
      expect(first.counters.notAsked.crossChecks).toBe(first.counters.unitsDone);

      const missing = all.find((e) => e.result_status === 'missing')!;
      const available = all.find((e) => e.result_status === 'available')!;
      const noShot = all.find((e) => e.screenshot_url === null && e !== missing && e !== available)!;
      const gone = all.find((e) => ![missing, available, noShot].includes(e))!;
      const childOnly = all.find(
        (e) =>
          ![missing, available, noShot, gone].includes(e) && sim.world.sources(e.prompt_task_id).length > 1,
      )!;
      const untouched = all.find((e) => ![missing, available, noShot, gone, childOnly].includes(e))!;
      const syncedAt = async (id: number) =>
        String(
          (
            await q(
              'SELECT CAST(synced_at AS VARCHAR) AS s FROM geo.prompt_executions WHERE prompt_task_id = $1',
              [id],
            )
          )[0]?.s,
        );
      const before = await syncedAt(untouched.prompt_task_id);

      const m = sim.world.mutations;
      m.setAnswer(missing.prompt_task_id, 'a late answer');
      m.setAnswer(available.prompt_task_id, 'an answer saved again');
      expect(m.takeScreenshot(noShot.prompt_task_id)).toBe(true);
      const project = sim.world.allPlatformTasks()[0]!.project_id;
      m.renameMonitoringTask(project, 'Renamed overnight');
      m.deleteExecution(gone.prompt_task_id);
      const removed = sim.world.sources(childOnly.prompt_task_id)[0]!.source_id;
      m.removeSource(removed);

      sim.stats.reset();
      const second = await nightly();
      expect(second.status).toBe('success');
      // The three whose listed item changed are read; the deleted one is gone; the rest unchanged.
      expect(second.counters.executionsRead).toBe(3);
      expect(second.counters.executionsUnchanged).toBe(all.length - 4);
      // One screenshot request per execution read whose listed item names one (the late one
      // does now; sources may take several pages).
      const named = [missing, available].filter((e) => e.screenshot_url !== null).length;
      expect(sim.stats.byEndpoint[SCREENSHOT]).toBe(1 + named);
      // task/prompts only for the unit that no longer lists a stored execution (the deleted one).
      expect(sim.stats.byEndpoint[PROMPTS]).toBe(1);
      expect(sim.stats.byEndpoint[SEARCHES]).toBeGreaterThanOrEqual(3);
      expect(await syncedAt(untouched.prompt_task_id)).toBe(before);
      const [run] = await q(
        'SELECT executions_read, executions_unchanged FROM geo.sync_runs WHERE run_id = $1',
        [second.runId],
      );
      expect(Number(run!.executions_read)).toBe(3);
      expect(Number(run!.executions_unchanged)).toBe(all.length - 4);
      expect(
        await q('SELECT * FROM geo.execution_fingerprints WHERE prompt_task_id = $1', [gone.prompt_task_id]),
      ).toEqual([]);
      const [renamed] = await q('SELECT project_name FROM geo.monitoring_tasks WHERE project_id = $1', [
        project,
      ]);
      expect(renamed!.project_name).toBe('Renamed overnight');

      // verify finds the child changed behind its unchanged item, and nothing else.
      const found = await check();
      expect(found.goneUpstream).toEqual([]);
      expect(found.differences).toEqual([
        {
          prompt_task_id: childOnly.prompt_task_id,
          table: 'execution_sources',
          key: `source_id=${removed}`,
          column: '(row)',
          stored: 'present',
          api: 'absent',
        },
      ]);
      expect(formatVerify(found)).toContain(
        `difference: execution ${childOnly.prompt_task_id} execution_sources source_id=${removed} (row): stored "present" vs API "absent"`,
      );

      const cli = await runCli(['verify', '--date', childOnly.date_time, '--sample', '1000'], {
        GEO_BASE_URL: sim.url,
        GEO_API_KEY: 'sim-key',
        GEO_WAREHOUSE: url,
        GEO_LOG_LEVEL: 'warn',
        GEO_CONCURRENCY: '16',
        GEO_REQUESTS_PER_SECOND: '10000',
        GEO_ENRICH_LEGACY_SOURCES: 'false',
        GEO_ENRICH_EXECUTION_TIMES: 'false',
      });
      expect(cli.code, cli.stderr).toBe(3);
      expect(cli.stdout).toContain(`execution_sources source_id=${removed} (row)`);

      // A fresh full sync of the changed world: equal, but for the source removed behind an
      // unchanged item (the assumption change detection makes; `verify` finds it).
      const fresh = await freshTarget.create();
      expect((await nightly(fresh)).status).toBe('success');
      const want = await dumpData(fresh);
      const got = await dumpData(url);
      for (const table of Object.keys(want)) {
        if (!FROM_SOURCES.includes(table)) expect(got[table], table).toEqual(want[table]);
      }
      // The aggregates follow the rows the warehouse holds, the extra source's citation included.
      expect(await rollupMismatches(url, ALL_DAYS[0], ALL_DAYS[1])).toEqual([]);
      expect(got.execution_sources!.length).toBe(want.execution_sources!.length + 1);
      expect(
        got
          .execution_sources!.filter(
            (r) => !want.execution_sources!.some((w) => JSON.stringify(w) === JSON.stringify(r)),
          )
          .map((r) => (r as unknown[])[0]),
      ).toEqual([removed]);

      // --reread reads every child again and converges exactly.
      sim.stats.reset();
      const reread = await nightly(url, true);
      expect(reread.counters.executionsRead).toBe(all.length - 1);
      expect(reread.counters.executionsUnchanged).toBe(0);
      expect(await dumpData(url)).toEqual(want);
      // Fixed: verify finds nothing; an execution deleted upstream meanwhile is reported as such.
      const later = all.find(
        (e) => ![missing, available, noShot, gone, childOnly].includes(e) && e !== untouched,
      )!;
      m.deleteExecution(later.prompt_task_id);
      const clean = await check();
      expect(clean.differences).toEqual([]);
      expect(clean.goneUpstream).toEqual([later.prompt_task_id]);
      expect(formatVerify(clean)).toContain(`execution ${later.prompt_task_id}: deleted upstream`);

      // A third run with nothing changed but that deletion reads no child at all, and asks
      // task/prompts only for the unit that no longer lists it (the only one that may have a
      // deletion), which deletes it.
      sim.stats.reset();
      const quiet = await nightly();
      expect(quiet.counters.executionsRead).toBe(0);
      expect(sim.stats.byEndpoint[SEARCHES] ?? 0).toBe(0);
      expect(sim.stats.byEndpoint[PROMPTS]).toBe(1);
      expect(quiet.counters.unitsListMismatch).toBe(0);
      expect(
        await q('SELECT 1 FROM geo.prompt_executions WHERE prompt_task_id = $1', [later.prompt_task_id]),
      ).toEqual([]);
    }, 180_000);

    it('an execution one of whose sources was quarantined is not complete: the next run reads it again', async () => {
      const stored = new Set(
        (await q('SELECT prompt_task_id FROM geo.prompt_executions')).map((r) => Number(r.prompt_task_id)),
      );
      const bad = items().find(
        (e) => stored.has(e.prompt_task_id) && sim.world.sources(e.prompt_task_id).length > 1,
      )!;
      const [first, second] = sim.world.sources(bad.prompt_task_id);
      sim.world.mutations.corruptSource(first!.source_id);
      // Read while the item is bad: the other sources are written, that one is quarantined.
      const read = await nightly(url, true);
      expect(read.status).toBe('partial');
      expect(read.counters.rejects).toBe(1);
      const [fp] = await q(
        'SELECT children_complete FROM geo.execution_fingerprints WHERE prompt_task_id = $1',
        [bad.prompt_task_id],
      );
      expect(fp!.children_complete).toBe(false);
      expect(
        await q('SELECT source_id FROM geo.execution_sources WHERE source_id = $1', [second!.source_id]),
      ).toHaveLength(1);
      // ...and the quarantined one's stored row is kept: a list read incompletely deletes nothing
      // (it used to delete it, its only trace left in sync_rejects).
      expect(
        await q('SELECT source_id FROM geo.execution_sources WHERE source_id = $1', [first!.source_id]),
      ).toHaveLength(1);
      // Its listed item is unchanged, yet it is read again (and only it), not trusted as complete.
      sim.stats.reset();
      const next = await nightly();
      expect(next.counters.executionsRead).toBe(1);
      expect(sim.stats.byEndpoint[SEARCHES]).toBeGreaterThanOrEqual(1);

      // verify leaves it out (the next run reads it anyway; its missing source is no drift)...
      const v = await check();
      expect(v.sampled).toBe(stored.size - 1);
      expect(v.differences).toEqual([]);
      expect(verifyPassed(v)).toBe(true);
      // ...and an execution it cannot read costs only itself: reported, not compared, not a pass.
      // One with sources (the world follows today's date): the last check below reads its list incompletely.
      const other = [...stored].find((id) => id !== bad.prompt_task_id && sim.world.sources(id).length > 1)!;
      const failing = await check((p) => ({
        ...p,
        sources: (id) =>
          id === other ? Promise.reject(new Error('injected: 503 after retries')) : p.sources(id),
      }));
      expect(failing.sampled).toBe(stored.size - 1);
      expect(failing.failed).toEqual([{ prompt_task_id: other, error: 'injected: 503 after retries' }]);
      expect(failing.differences).toEqual([]);
      expect(verifyPassed(failing)).toBe(false);
      expect(formatVerify(failing)).toContain(
        `execution ${other}: could not be read (injected: 503 after retries), not compared`,
      );
      // A refused key is no per-execution failure: verify stops on it, as a run does.
      const refused = new UnauthorizedError({ endpoint: 'GET /api/v2/geo/prompt/searches', status: 401 });
      await expect(check((p) => ({ ...p, sources: () => Promise.reject(refused) }))).rejects.toBe(refused);
      // A source list read incompletely (one item quarantined) is not compared: what was read is no
      // account of what is stored.
      const partial = await check((p) => ({
        ...p,
        sources: async (id) => {
          const list = await p.sources(id);
          return id === other ? { items: list.items.slice(1), total: list.total } : list;
        },
      }));
      expect(partial.differences).toEqual([]);
      expect(partial.unread).toContainEqual({ prompt_task_id: other, child: 'sources (read incompletely)' });
    }, 120_000);
  });
}

/**
 * One night per change: each mutation is followed by its own scheduled run,
 * which reads exactly the executions whose item changed and leaves the warehouse equal to a fresh
 * full sync of that night's world (the child-only change excepted: that is what verify and
 * --reread are for, tested above).
 */
for (const target of warehouseTargets('nightly-each')) {
  describe.skipIf(target.skip)(`one night per change, into ${target.dialect}`, () => {
    let sim: RunningSimulator;
    let url: string;
    let dates: string[];
    const freshTargets: ReturnType<typeof warehouseTargets>[number][] = [];

    beforeAll(async () => {
      url = await target.create();
      sim = await startSimulator({ seed: 2121, days: 2, executionsPerDay: 16 });
      dates = sim.world.dates();
      ensureMissingAnswer(sim.world, dates);
      ensureWithoutScreenshot(sim.world, dates, 3);
    });
    afterAll(async () => {
      await sim?.close();
      await target.drop();
      for (const t of freshTargets) await t.drop();
    });

    const nightly = (into: string) => scheduledRun(sim, into);
    /** A full sync of the world as it is now, into a warehouse of its own. */
    const freshDump = async () => {
      const t =
        target.dialect === 'duckdb'
          ? duckdbTarget(`nightly-each-${freshTargets.length}`)
          : postgresTarget('each');
      freshTargets.push(t);
      const into = await t.create();
      expect((await nightly(into)).status).toBe('success');
      return dumpData(into);
    };

    it('each change alone: read alone, and the warehouse equal to a fresh sync after its night', async () => {
      const first = await nightly(url);
      expect(first.status).toBe('success');
      const all = executionsOn(sim.world, dates);
      const missing = all.find((e) => e.result_status === 'missing')!;
      const available = all.find((e) => e.result_status === 'available')!;
      const noShot = all.find((e) => e.screenshot_url === null && e !== missing && e !== available)!;
      const gone = all.find((e) => ![missing, available, noShot].includes(e))!;
      const childOnly = all.find(
        (e) =>
          ![missing, available, noShot, gone].includes(e) && sim.world.sources(e.prompt_task_id).length > 1,
      )!;
      const m = sim.world.mutations;
      const project = sim.world.allPlatformTasks()[0]!.project_id;
      let deleted = 0;
      const nights: {
        change: string;
        apply: () => void;
        read: number;
        screenshots: number;
        exact: boolean;
      }[] = [
        {
          change: 'late answer',
          apply: () => m.setAnswer(missing.prompt_task_id, 'a late answer'),
          read: 1,
          // No screenshot request for an item listed without one: it could bring nothing.
          screenshots: missing.screenshot_url === null ? 0 : 1,
          exact: true,
        },
        {
          change: 'answer saved again',
          apply: () => m.setAnswer(available.prompt_task_id, 'saved again'),
          read: 1,
          screenshots: available.screenshot_url === null ? 0 : 1,
          exact: true,
        },
        {
          change: 'late screenshot',
          apply: () => void m.takeScreenshot(noShot.prompt_task_id),
          read: 1,
          screenshots: 1,
          exact: true,
        },
        {
          change: 'renamed monitoring task',
          apply: () => m.renameMonitoringTask(project, 'Renamed'),
          read: 0,
          screenshots: 0,
          exact: true,
        },
        {
          change: 'deleted upstream',
          apply: () => {
            m.deleteExecution(gone.prompt_task_id);
            deleted = 1;
          },
          read: 0,
          screenshots: 0,
          exact: true,
        },
        {
          change: 'a source removed behind its unchanged item',
          apply: () => m.removeSource(sim.world.sources(childOnly.prompt_task_id)[0]!.source_id),
          read: 0,
          screenshots: 0,
          exact: false,
        },
      ];
      for (const night of nights) {
        night.apply();
        sim.stats.reset();
        const run = await nightly(url);
        expect(run.status, night.change).toBe('success');
        expect(run.counters.executionsRead, night.change).toBe(night.read);
        expect(run.counters.executionsUnchanged, night.change).toBe(all.length - deleted - night.read);
        expect(sim.stats.byEndpoint[SCREENSHOT] ?? 0, night.change).toBe(night.screenshots);
        // task/prompts only for the unit that no longer lists a stored execution (a deletion).
        expect(sim.stats.byEndpoint[PROMPTS] ?? 0, night.change).toBe(
          night.change === 'deleted upstream' ? 1 : 0,
        );
        const want = await freshDump();
        const got = await dumpData(url);
        for (const table of Object.keys(want)) {
          if (night.exact || !FROM_SOURCES.includes(table))
            expect(got[table], `${night.change}: ${table}`).toEqual(want[table]);
        }
        expect(await rollupMismatches(url, ALL_DAYS[0], ALL_DAYS[1]), night.change).toEqual([]);
        if (!night.exact)
          expect(got.execution_sources!.length, night.change).toBe(want.execution_sources!.length + 1);
      }
    }, 180_000);
  });
}
