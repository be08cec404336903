/**
 * A write that fails because of one record costs that record, never its transaction: on both
 * warehouses, the execution (or small-table row) whose rows the warehouse refuses is found by
 * bisection, quarantined in geo.sync_rejects with reason `write_failed: <what the database
 * said>`, and left out; every other execution of the group-commit transaction is stored, the units
 * are checkpointed, the run ends partial (exit 3), and the next run loses nothing.
 *
 * The bad values are of two kinds: rows the schema would not produce, handed to the warehouse
 * below it (a NaN rank visibility, an hours past INTEGER), through the run's own GroupWriter and
 * through a whole sync; and answers of the simulator that today's schemas let through and the
 * warehouse refuses (`"-"` as a rank's visibility parses to NaN; a platform task status past
 * INTEGER), served through a proxy to the real command line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { ApiPort } from '../../src/extract/port.ts';
import type { UnitCompletion, Warehouse } from '../../src/load/warehouse.ts';
import { silentLogger } from '../../src/log.ts';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { RunContext } from '../../src/sync/context.ts';
import type { ExecutionBatch, PlatformTaskRow, RejectRow } from '../../src/transform/rows.ts';
import { runCli } from '../helpers/cli.ts';
import { dumpData, rollupMismatches } from '../helpers/dump.ts';
import { startProxy } from '../helpers/proxy.ts';
import { syncOnce, withWarehouse } from '../helpers/sync.ts';
import { duckdbTarget, postgresTarget, warehouseTargets, type WarehouseTarget } from '../helpers/targets.ts';
import { firstWith } from '../helpers/world.ts';
import { batch, execution, rank } from '../load/fixtures.ts';

const DAY = '2026-11-20';
/** The account-level reads are not what these tests are about: off, for time. */
const ENRICH_OFF = { diagnosis: false, finance: false, taskConfig: false };
const TASK_RESULTS = 'GET /api/v2/geo/task/results';

type Reject = Pick<RejectRow, 'endpoint' | 'reason'> & { params: Record<string, unknown>; raw: unknown };

async function rejects(target: string): Promise<Reject[]> {
  return withWarehouse(
    target,
    async (w) =>
      (await w.query('SELECT endpoint, params, reason, raw FROM geo.sync_rejects ORDER BY id')) as Reject[],
  );
}

async function storedIds(target: string, day: string): Promise<number[]> {
  return withWarehouse(target, async (w) =>
    (
      await w.query(
        'SELECT prompt_task_id FROM geo.prompt_executions WHERE CAST(date_time AS VARCHAR) = $1 ORDER BY prompt_task_id',
        [day],
      )
    ).map((r) => Number(r.prompt_task_id)),
  );
}

async function checkpointed(target: string, day: string): Promise<number[]> {
  return withWarehouse(target, async (w) =>
    (await w.unitRecords(day, day)).checkpoints.map((c) => Number(c.task_id)).sort((a, b) => a - b),
  );
}

const completion = (task_id: number, ids: number[]): UnitCompletion => ({
  task_id,
  date: DAY,
  seenPromptTaskIds: ids,
  checkpoint: {
    task_id,
    date: DAY,
    run_id: 'run-a',
    finished_at: `${DAY}T12:00:00+08:00`,
    executions: ids.length,
  },
});

/** One unit's executions `ids`, each with two ranks; `bad` changes one execution's rows. */
function unitBatch(task_id: number, ids: number[], bad: Record<number, (b: ExecutionBatch) => void> = {}) {
  const b = batch({
    executions: ids.map((id) => execution(id, { task_id })),
    ranks: ids.flatMap((id) => [rank(id, 0, 'Acme', 1), rank(id, 1, 'Globex', 2)]),
  });
  for (const id of ids) {
    const only = batch({
      executions: b.executions.filter((e) => e.prompt_task_id === id),
      ranks: b.ranks.filter((r) => r.prompt_task_id === id),
    });
    bad[id]?.(only);
    b.executions = b.executions.map((e) => (e.prompt_task_id === id ? only.executions[0]! : e));
    b.ranks = b.ranks.filter((r) => r.prompt_task_id !== id).concat(only.ranks);
  }
  return b;
}

/** The world's executions of `day`, by platform task (those with at least one). */
function executionsByTask(sim: RunningSimulator, day: string) {
  return sim.world
    .allPlatformTasks()
    .map((t) => ({ task: t, executions: [...sim.world.executions(t.task_id, day)] }))
    .filter((t) => t.executions.length > 0);
}

/** A run's view of `w` whose execution batches carry `visibility` NaN in `bad`'s ranks. */
function refusingRank(bad: number) {
  return (w: Warehouse): Warehouse =>
    new Proxy(w, {
      get(target, prop) {
        if (prop === 'writeExecutionBatch')
          return (b: ExecutionBatch, cs?: readonly UnitCompletion[]) =>
            target.writeExecutionBatch(
              {
                ...b,
                ranks: b.ranks.map((r) => (r.prompt_task_id === bad ? { ...r, visibility: Number.NaN } : r)),
              },
              cs,
            );
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
}

for (const t of warehouseTargets('write-isolation')) {
  describe.skipIf(t.skip)(`a write that fails because of one record, on ${t.dialect}`, () => {
    const targets: WarehouseTarget[] = [];
    const fresh = async () => {
      const target =
        t.dialect === 'duckdb' ? duckdbTarget('write-isolation') : postgresTarget('write-isolation');
      targets.push(target);
      const url = await target.create();
      await withWarehouse(url, (w) => w.migrate());
      return url;
    };
    let sim: RunningSimulator;
    let day: string;

    beforeAll(async () => {
      // 120 a day over 34 platform tasks: every unit of two or more, and one of three or more with
      // ranks, in each of 400 days' worlds (GEO_SIM_WORLD_SHIFT 0-399); at 60 a day 34 of those
      // worlds had no unit of three.
      sim = await startSimulator({ seed: 41, days: 1, executionsPerDay: 120 });
      day = sim.world.dates()[0]!;
    });
    afterAll(async () => {
      await sim?.close();
      for (const target of targets) await target.drop();
    });

    it("through the run's group writer: the bad executions quarantined, the rest of the transaction stored, every unit checkpointed", async () => {
      const url = await fresh();
      await withWarehouse(url, async (w) => {
        // Execution 1202 was stored before with a good rank; the run reads it again with a bad one.
        await w.writeExecutionBatch(unitBatch(12, [1202]));
        const config = loadConfig({
          env: {},
          // No linger: the first unit's rows go at once, in a transaction of their own.
          overrides: { baseUrl: 'http://127.0.0.1:9', apiKey: 'k', warehouse: url, writeLingerMs: 0 },
        });
        const ctx = new RunContext(
          'run-a',
          {} as ApiPort,
          w,
          silentLogger,
          config,
          undefined,
          () => new Date(),
        );
        // A first transaction is held by the warehouse while the three units queue: their rows
        // and completions then go in one transaction, as when units are small.
        await ctx.writer.add(10, DAY, unitBatch(10, [1001]));
        await ctx.writer.add(11, DAY, unitBatch(11, [1101, 1102, 1103]));
        await ctx.writer.add(
          12,
          DAY,
          unitBatch(12, [1201, 1202, 1203], { 1202: (b) => (b.ranks[1]!.visibility = Number.NaN) }),
        );
        await ctx.writer.add(
          13,
          DAY,
          unitBatch(13, [1301, 1302], { 1302: (b) => (b.executions[0]!.hours = 3_000_000_000) }),
        );
        await Promise.all([
          ctx.writer.complete(completion(11, [1101, 1102, 1103])),
          ctx.writer.complete(completion(12, [1201, 1202, 1203])),
          ctx.writer.complete(completion(13, [1301, 1302])),
        ]);
        await ctx.writer.drain();
        await ctx.flushRejects();

        expect(ctx.counters.executionsNotStored).toBe(2);
        expect(ctx.counters.rejects).toBe(2);
        expect(ctx.counters.rows.prompt_executions).toBe(1 + 3 + 2 + 1);
      });

      // Everything but the two bad executions; 1202 as it was stored before, 1302 never was.
      expect(await storedIds(url, DAY)).toEqual([1001, 1101, 1102, 1103, 1201, 1202, 1203, 1301]);
      const ranks = await withWarehouse(url, (w) =>
        w.query(
          'SELECT ordinal, visibility FROM geo.execution_ranks WHERE prompt_task_id = 1202 ORDER BY ordinal',
        ),
      );
      expect(ranks.map((r) => Number(r.visibility))).toEqual([80, 80]);
      expect(await checkpointed(url, DAY)).toEqual([11, 12, 13]);

      const [nan, hours] = await rejects(url);
      expect(nan).toMatchObject({
        endpoint: TASK_RESULTS,
        params: { task_id: 12, date: DAY, prompt_task_id: 1202 },
        reason: expect.stringMatching(/^write_failed: .*NaN.*\(execution_ranks\.visibility\)$/),
      });
      // The rows as the transaction carried them, the refused value readable.
      const raw = nan!.raw as {
        prompt_executions: { prompt_task_id: number }[];
        execution_ranks: { visibility: unknown }[];
      };
      expect(raw.prompt_executions.map((e) => e.prompt_task_id)).toEqual([1202]);
      expect(raw.execution_ranks.map((r) => r.visibility)).toEqual([80, 'NaN']);
      expect(hours).toMatchObject({
        endpoint: TASK_RESULTS,
        params: { task_id: 13, date: DAY, prompt_task_id: 1302 },
        reason: expect.stringMatching(/^write_failed: .*\(prompt_executions\.hours\)$/),
      });
      expect(await rollupMismatches(url, DAY, DAY)).toEqual([]);
    });

    it('small tables: a refused row is quarantined alone, the others stored', async () => {
      const url = await fresh();
      const row = (task_id: number, status = 1): PlatformTaskRow => ({
        task_id,
        project_id: 7,
        customer_id: 70,
        task_name: `task ${task_id}`,
        model_key: 'k',
        model_name: 'm',
        engine: 'e',
        status,
        status_name: 's',
      });
      await withWarehouse(url, async (w) => {
        const config = loadConfig({
          env: {},
          overrides: { baseUrl: 'http://127.0.0.1:9', apiKey: 'k', warehouse: url },
        });
        const ctx = new RunContext(
          'run-b',
          {} as ApiPort,
          w,
          silentLogger,
          config,
          undefined,
          () => new Date(),
        );
        const rows = [1, 2, 3, 4, 5].map((id) => row(id, id === 4 ? 3_000_000_000 : 1));
        expect(
          await ctx.writeRecords(
            rows,
            (r) => w.upsertPlatformTasks(r),
            () => ({ endpoint: 'GET /api/v2/geo/project/tasks', params: {} }),
          ),
        ).toBe(4);
        await ctx.flushRejects();
        expect(ctx.counters.recordsNotStored).toBe(1);
        expect((await w.platformTaskIds()).map(Number)).toEqual([1, 2, 3, 5]);
      });
      const [r] = await rejects(url);
      expect(r!.reason).toMatch(/^write_failed: .*3000000000/);
      expect(r!.raw).toMatchObject({ task_id: 4, status: 3_000_000_000 });
    });

    it('a whole sync with a value refused below the schema: partial, the rest stored and checkpointed, and the next run loses nothing', async () => {
      const url = await fresh();
      const byTask = executionsByTask(sim, day);
      const unit = firstWith(
        byTask,
        (u) => u.executions.length >= 3 && u.executions.some((e) => e.rank_details.length > 0),
        'unit of three executions with ranks',
      );
      const bad = unit.executions.find((e) => e.rank_details.length > 0)!.prompt_task_id;
      const all = byTask.flatMap((u) => u.executions.map((e) => e.prompt_task_id)).sort((a, b) => a - b);

      const first = await syncOnce({
        baseUrl: sim.url,
        target: url,
        dates: [day],
        config: { enrich: ENRICH_OFF },
        wrapWarehouse: refusingRank(bad),
      });
      expect(first.status).toBe('partial');
      expect(first.error).toBeNull();
      expect(first.counters.unitsFailed).toBe(0);
      expect(first.counters.executionsNotStored).toBe(1);
      expect(await storedIds(url, day)).toEqual(all.filter((id) => id !== bad));
      expect(await checkpointed(url, day)).toEqual(byTask.map((u) => u.task.task_id).sort((a, b) => a - b));
      const [quarantined, ...others] = await rejects(url);
      expect(others).toEqual([]);
      expect(quarantined).toMatchObject({
        endpoint: TASK_RESULTS,
        params: { task_id: unit.task.task_id, date: day, prompt_task_id: bad },
        reason: expect.stringMatching(/^write_failed: .*NaN.*\(execution_ranks\.visibility\)$/),
      });
      expect(await rollupMismatches(url, day, day)).toEqual([]);

      // The next run (the day is in the look-back window) reads the unit again: the bad execution
      // fails alone again, nothing stored is lost.
      const before = await dumpData(url);
      const second = await syncOnce({
        baseUrl: sim.url,
        target: url,
        dates: [day],
        config: { enrich: ENRICH_OFF },
        wrapWarehouse: refusingRank(bad),
      });
      expect(second.status).toBe('partial');
      expect(second.counters.unitsFailed).toBe(0);
      expect(second.counters.executionsNotStored).toBe(1);
      expect(await dumpData(url)).toEqual(before);

      // Once the value is accepted, the execution is stored like the others.
      const third = await syncOnce({
        baseUrl: sim.url,
        target: url,
        dates: [day],
        config: { enrich: ENRICH_OFF },
      });
      expect(third.status).toBe('success');
      expect(await storedIds(url, day)).toEqual(all);
      expect(await rollupMismatches(url, day, day)).toEqual([]);
    });

    it('through the command line, the answers that once failed whole units: the rank stored with its raw value, the platform task quarantined alone, the rest stored', async () => {
      const url = await fresh();
      const byTask = executionsByTask(sim, day);
      const unit = firstWith(byTask, (u) => u.executions.length >= 3, 'unit of three executions');
      const bad = unit.executions[1]!.prompt_task_id;
      const badTask = firstWith(byTask, (u) => u !== unit, 'second unit').task.task_id;
      const all = byTask.flatMap((u) => u.executions.map((e) => e.prompt_task_id)).sort((a, b) => a - b);
      const proxy = await startProxy(sim.url, {
        rewrite: (u, body) => {
          const answer = JSON.parse(body) as { data?: unknown };
          if (u.pathname === '/api/v2/geo/task/results') {
            const items = (answer.data as { data: { prompt_task_id: number; rank_details: unknown[] }[] })
              .data;
            const item = items.find((i) => i.prompt_task_id === bad);
            if (!item) return undefined;
            item.rank_details = [{ brand: 'x', brand_short: 'x', position: 1, visibility: '-', score: 1 }];
            return JSON.stringify(answer);
          }
          if (u.pathname === '/api/v2/geo/project/tasks' && Array.isArray(answer.data)) {
            for (const p of answer.data as { task_id: number; status: number }[])
              if (p.task_id === badTask) p.status = 3_000_000_000;
            return JSON.stringify(answer);
          }
          return undefined;
        },
      });
      try {
        const env = {
          GEO_BASE_URL: proxy.url,
          GEO_API_KEY: 'sim-key',
          GEO_WAREHOUSE: url,
          GEO_REQUESTS_PER_SECOND: '10000',
          GEO_CONCURRENCY: '16',
          GEO_ENRICH_DIAGNOSIS: 'false',
          GEO_ENRICH_FINANCE: 'false',
          GEO_ENRICH_TASK_CONFIG: 'false',
        };
        const run = await runCli(['sync', '--date', day, '--no-progress'], env);
        expect(run.code, run.stderr.slice(-2000)).toBe(3);
        const found = await rejects(url);
        // A visibility of "-" once failed the unit's whole transaction; it is a placeholder now:
        // the item is stored with a NULL visibility and the text the API sent kept beside it. The
        // status beyond INTEGER once failed at the write; the schema refuses it now, so the
        // platform task alone is quarantined with its reason, before the warehouse.
        expect(found.filter((r) => r.params.prompt_task_id === bad)).toEqual([]);
        const task = found.filter(
          (r) => r.params.task_id === badTask || (r.raw as { task_id?: number })?.task_id === badTask,
        );
        expect(task, JSON.stringify(found)).toHaveLength(1);
        expect(task[0]!.reason).toMatch(/status: 3000000000 is beyond INTEGER/);
        const ranks = await withWarehouse(url, (w) =>
          w.query('SELECT visibility, raw_values FROM geo.execution_ranks WHERE prompt_task_id = $1', [bad]),
        );
        expect(ranks).toHaveLength(1);
        expect(ranks[0]!.visibility).toBeNull();
        expect(JSON.stringify(ranks[0]!.raw_values)).toMatch(/"visibility":\s*"-"/);
        // Every other unit stored whole and checkpointed. The quarantined platform task's unit is
        // not read (its record is the one reported); the next run reads it once the API sends a
        // status the column holds.
        const refused = new Set(
          byTask.find((u) => u.task.task_id === badTask)!.executions.map((e) => e.prompt_task_id),
        );
        expect(await storedIds(url, day)).toEqual(all.filter((id) => !refused.has(id)));
        expect(await checkpointed(url, day)).toEqual(
          byTask
            .map((u) => u.task.task_id)
            .filter((t) => t !== badTask)
            .sort((a, b) => a - b),
        );
        expect((await withWarehouse(url, (w) => w.platformTaskIds())).map(Number)).not.toContain(badTask);

        // The next run loses nothing.
        const before = await dumpData(url);
        const again = await runCli(['sync', '--date', day, '--no-progress'], env);
        expect(again.code, again.stderr.slice(-2000)).toBe(3);
        expect(await dumpData(url)).toEqual(before);
      } finally {
        await proxy.close();
      }
    });
  });
}
