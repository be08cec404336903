/**
 * Over real sockets into both warehouses: offset paging of task/results under a
 * list that changes between two pages skips a live execution; the unit's task/prompts list keeps
 * the "no longer listed" rule from deleting it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startSimulator,
  type RunningSimulator,
  type WirePromptResultItem,
} from '../../src/simulator/index.ts';
import { formatSummary } from '../../src/sync/summary.ts';
import { syncOnce, withWarehouse } from '../helpers/sync.ts';
import { duckdbTarget, postgresTarget, warehouseTargets } from '../helpers/targets.ts';

/** Small pages, so a unit of a small world spans several of them. */
const PAGE = 3;
const PROMPTS = 'GET /api/v2/geo/task/prompts';

for (const target of warehouseTargets('shifting-pages')) {
  describe.skipIf(target.skip)(`paging that shifts, into ${target.dialect}`, () => {
    let sim: RunningSimulator;
    let url: string;
    let day: string;
    /** The unit's executions in list order: the last one sits on the last page. */
    let unit: WirePromptResultItem[];
    /** The page project owning the unit: the only one synced, to keep the test small. */
    let customer: number;

    beforeAll(async () => {
      url = await target.create();
      sim = await startSimulator({
        seed: 17,
        days: 1,
        executionsPerDay: 400,
        faults: { resultsPerPageCap: PAGE },
      });
      day = sim.world.dates()[0]!;
      unit = sim.world
        .allPlatformTasks()
        .map((t) => [...sim.world.executions(t.task_id, day)])
        .find((list) => list.length > 2 * PAGE)!;
      expect(unit).toBeDefined();
      customer = unit[0]!.customer_id!;
      const first = await sync();
      expect(first.status).toBe('success');
      expect(first.counters.unitsListMismatch).toBe(0);
    });
    afterAll(async () => {
      await sim?.close();
      await target.drop();
    });

    const sync = () =>
      syncOnce({ baseUrl: sim.url, target: url, dates: [day], force: true, customers: [customer] });
    const stored = async (id: number) =>
      (
        await withWarehouse(url, (w) =>
          w.query('SELECT 1 FROM geo.prompt_executions WHERE prompt_task_id = $1', [id]),
        )
      ).length;

    it('an execution inserted at the head between two pages is skipped by task/results but not deleted', async () => {
      const moved = unit.at(-1)!;
      expect(await stored(moved.prompt_task_id)).toBe(1);
      sim.world.mutations.moveToHeadBetweenPages(moved.prompt_task_id);
      try {
        sim.stats.reset();
        const s = await sync();
        // task/results never returned it (it moved to a page already read) ...
        expect(s.counters.unitsListMismatch).toBe(1);
        // ... so that unit, and only it, asked task/prompts: the others list every stored
        // execution, whole, and delete nothing (a listing that shifted proves no deletion).
        expect(sim.stats.byEndpoint[PROMPTS]).toBe(1);
        expect(s.counters.notAsked.crossChecks).toBe(s.counters.unitsDone - 1);
        expect(formatSummary(s)).toContain(
          'list mismatches: 1 units where task/results and task/prompts disagreed; nothing deleted for them',
        );
        expect(s.status).toBe('success');
        // ... and the live row is still there, with every other execution of the day.
        expect(await stored(moved.prompt_task_id)).toBe(1);
        const counts = await withWarehouse(url, (w) => w.counts());
        const expected = sim.world
          .allPlatformTasks()
          .filter((t) => t.customer_id === customer)
          .reduce((n, t) => n + [...sim.world.executions(t.task_id, day)].length, 0);
        expect(counts.prompt_executions).toBe(expected);

        // Once the list holds still, the lists agree again and nothing is missing.
        const again = await sync();
        expect(again.counters.unitsListMismatch).toBe(0);
        expect(await stored(moved.prompt_task_id)).toBe(1);
      } finally {
        sim.world.mutations.reset();
      }
    });

    it('with agreeing lists, an execution no longer listed is still deleted', async () => {
      const gone = unit[1]!;
      sim.world.mutations.deleteExecution(gone.prompt_task_id);
      try {
        sim.stats.reset();
        const s = await sync();
        expect(s.counters.unitsListMismatch).toBe(0);
        expect(sim.stats.byEndpoint[PROMPTS]).toBe(1);
        expect(await stored(gone.prompt_task_id)).toBe(0);
      } finally {
        sim.world.mutations.reset();
      }
    });

    it('a first read whose pages shift still asks task/prompts: its listing is short of its total', async () => {
      // Nothing stored, so nothing to delete; yet the listing's own count says it moved.
      const fresh = target.dialect === 'duckdb' ? duckdbTarget('shifting-first') : postgresTarget('first');
      const into = await fresh.create();
      const moved = unit.at(-1)!;
      sim.world.mutations.moveToHeadBetweenPages(moved.prompt_task_id);
      try {
        sim.stats.reset();
        const s = await syncOnce({ baseUrl: sim.url, target: into, dates: [day], customers: [customer] });
        expect(s.status).toBe('success');
        expect(sim.stats.byEndpoint[PROMPTS]).toBe(1);
        expect(s.counters.unitsListMismatch).toBe(1);
        expect(s.counters.notAsked.crossChecks).toBe(s.counters.unitsDone - 1);
      } finally {
        sim.world.mutations.reset();
        await fresh.drop();
      }
    });
  });
}
