/**
 * Over real sockets into both warehouses: offset paging that shifts while an
 * answer is saved again lists one execution twice in its unit, the second time updated (a new
 * answer, one rank item fewer). The copy listed last is kept whole (its answer with its own rank
 * rows, its fingerprint), whether both copies meet in one batch, in separate batches, or when the
 * warehouse already holds the later one; the run counts and logs it; `verify` compares the ranks
 * (and every column of the execution) with the execution's own endpoints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../../src/config.ts';
import {
  startSimulator,
  type RunningSimulator,
  type WirePromptResultItem,
} from '../../src/simulator/index.ts';
import { formatSummary } from '../../src/sync/summary.ts';
import { runCli } from '../helpers/cli.ts';
import { damage } from '../helpers/damage.ts';
import { syncOnce, withWarehouse } from '../helpers/sync.ts';
import { warehouseTargets } from '../helpers/targets.ts';

/** Small pages, so the unit spans several and the execution is on the first. */
const PAGE = 2;
const SAVED_AGAIN = 'an answer saved again while the list was paged';

const quiet: Partial<ConfigInput> = {
  enrich: {
    diagnosis: false,
    finance: false,
    taskConfig: false,
    legacySources: false,
    executionTimes: false,
  },
};

for (const target of warehouseTargets('listed-twice')) {
  describe.skipIf(target.skip)(`an execution listed twice, into ${target.dialect}`, () => {
    let sim: RunningSimulator;
    let url: string;
    let day: string;
    /** The execution saved again: on the first page of its unit, with several rank items. */
    let x: WirePromptResultItem;

    beforeAll(async () => {
      url = await target.create();
      sim = await startSimulator({
        seed: 17,
        days: 1,
        executionsPerDay: 100,
        faults: { resultsPerPageCap: PAGE },
      });
      day = sim.world.dates()[0]!;
      x = sim.world
        .allPlatformTasks()
        .map((t) => [...sim.world.executions(t.task_id, day)])
        .filter((list) => list.length > PAGE)
        .flatMap((list) => list.slice(0, PAGE))
        .find((e) => e.rank_details.length > 1)!;
      expect(x).toBeDefined();
    });
    afterAll(async () => {
      await sim?.close();
      await target.drop();
    });

    const sync = (config: Partial<ConfigInput> = {}, reread = false) =>
      syncOnce({
        baseUrl: sim.url,
        target: url,
        dates: [day],
        force: true,
        reread,
        customers: [x.customer_id!],
        config: { ...quiet, ...config },
      });
    const stored = () =>
      withWarehouse(url, async (w) => ({
        answer: (
          await w.query('SELECT answer FROM geo.prompt_executions WHERE prompt_task_id = $1', [
            x.prompt_task_id,
          ])
        )[0]?.answer,
        ranks: (
          await w.query(
            'SELECT ordinal, brand FROM geo.execution_ranks WHERE prompt_task_id = $1 ORDER BY ordinal',
            [x.prompt_task_id],
          )
        ).map((r) => `${String(r.ordinal)}:${String(r.brand)}`),
      }));
    /** The execution as the API says it is now: the copy saved again. */
    const saved = () => ({
      answer: SAVED_AGAIN,
      ranks: x.rank_details.slice(0, -1).map((r, i) => `${i}:${r.brand}`),
    });
    /** The list holds still again, the execution as it was (listed first at its place). */
    const armAgain = () => {
      sim.world.mutations.reset();
      sim.world.mutations.resaveBetweenPages(x.prompt_task_id, SAVED_AGAIN);
    };

    it('both copies read in one batch: the later copy whole, counted, and not read again', async () => {
      sim.world.mutations.resaveBetweenPages(x.prompt_task_id, SAVED_AGAIN);
      const s = await sync();
      expect(s.status).toBe('success');
      expect(s.counters.executionsListedTwice).toBe(1);
      expect(formatSummary(s)).toContain(
        'listed twice: 1 executions listed again in their unit (the list shifted between pages); the copy listed last was read and kept whole',
      );
      // Before: the new answer beside the earlier copy's extra rank row.
      expect(await stored()).toEqual(saved());
      // Its fingerprint is the later copy's: the next run leaves it as it is (not rewritten), and
      // it stays right. (That run reads the one execution the shifted page skipped, never stored.)
      const syncedAt = () =>
        withWarehouse(url, (w) =>
          w.query(
            'SELECT CAST(synced_at AS VARCHAR) AS s FROM geo.prompt_executions WHERE prompt_task_id = $1',
            [x.prompt_task_id],
          ),
        );
      const before = await syncedAt();
      const next = await sync();
      expect(next.counters.executionsListedTwice).toBe(0);
      expect(next.counters.executionsRead).toBe(1);
      expect(await syncedAt()).toEqual(before);
      expect(await stored()).toEqual(saved());
    });

    it('copies in separate batches (and maybe transactions): the later copy whole', async () => {
      armAgain();
      const s = await sync({ batchSize: 1 }, true);
      expect(s.status).toBe('success');
      expect(s.counters.executionsListedTwice).toBe(1);
      expect(await stored()).toEqual(saved());
    });

    it('the later copy equal to what is stored is still read: the older, earlier copy never wins', async () => {
      // Stored: the copy saved again. Listed: first the older copy (changed: read), then the
      // stored one (unchanged: it used to be skipped, and the older copy was written).
      armAgain();
      const s = await sync();
      expect(s.status).toBe('success');
      expect(s.counters.executionsListedTwice).toBe(1);
      expect(await stored()).toEqual(saved());
    });

    it('verify compares the ranks and the execution row with its own endpoints', async () => {
      sim.world.mutations.reset();
      sim.world.mutations.resaveBetweenPages(x.prompt_task_id, SAVED_AGAIN);
      // The list holds still from here: the execution is saved again and listed last.
      await sync();
      const env = {
        GEO_WAREHOUSE: url,
        GEO_BASE_URL: sim.url,
        GEO_API_KEY: 'sim-key',
        GEO_LOG_LEVEL: 'warn',
        GEO_REQUESTS_PER_SECOND: '10000',
        GEO_CONCURRENCY: '16',
        // As the runs above read (see `quiet`).
        GEO_ENRICH_EXECUTION_TIMES: 'false',
        GEO_ENRICH_LEGACY_SOURCES: 'false',
      };
      const verify = () => runCli(['verify', '--date', day, '--sample', '1000'], env);
      const clean = await verify();
      expect(clean.code, clean.stdout + clean.stderr).toBe(0);

      // The row two copies left before: the earlier copy's last rank item beside the new answer.
      const ordinal = x.rank_details.length - 1;
      await damage(
        url,
        `INSERT INTO geo.execution_ranks (prompt_task_id, ordinal, brand, brand_short, position, visibility, score, synced_at)
         VALUES (${x.prompt_task_id}, ${ordinal}, 'stale', 'stale', 1, 1, 1, CURRENT_TIMESTAMP)`,
      );
      await damage(
        url,
        `UPDATE geo.prompt_executions SET rank_exposure_number = '99' WHERE prompt_task_id = ${x.prompt_task_id}`,
      );
      const r = await verify();
      expect(r.code, r.stdout + r.stderr).toBe(3);
      expect(r.stdout).toContain(
        `difference: execution ${x.prompt_task_id} execution_ranks prompt_task_id=${x.prompt_task_id},ordinal=${ordinal} (row): stored "present" vs API "absent"`,
      );
      expect(r.stdout).toContain(
        `difference: execution ${x.prompt_task_id} prompt_executions prompt_task_id=${x.prompt_task_id} rank_exposure_number: stored "99" vs API "${x.rank_details.slice(0, -1).filter((d) => typeof d.position === 'number' && d.position > 0).length}"`,
      );
      expect(r.stdout).toMatch(/: 2 differences in 1 executions/);
    });
  });
}
