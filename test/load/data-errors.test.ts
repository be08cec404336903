/**
 * Which write failures the values of the rows caused (Warehouse.dataError, Driver.dataError),
 * on both warehouses, from the errors they really throw: a value its column refuses (NaN, a
 * fraction or text into BIGINT, a number out of INTEGER's range, a day that does not exist), a
 * NOT NULL or CHECK constraint, a row over PostgreSQL's index size limit are data errors, named
 * with their table and column where the database says; a duplicate key (the batch merge's own
 * cue), a lost fence, an interruption, a lost connection, a statement that is wrong are not.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InterruptedError } from '../../src/abort.ts';
import type { Driver } from '../../src/load/core/driver.ts';
import { DuckDBDriver } from '../../src/load/duckdb/driver.ts';
import { openWarehouse, parseWarehouseTarget, type Warehouse } from '../../src/load/index.ts';
import { PostgresDriver } from '../../src/load/postgres/driver.ts';
import { silentLogger } from '../../src/log.ts';
import type { ExecutionBatch, PlatformTaskRow } from '../../src/transform/rows.ts';
import { warehouseTargets } from '../helpers/targets.ts';
import { batch, execution, rank } from './fixtures.ts';

/** The error `write` fails with (it must fail). */
async function failure(write: () => Promise<unknown>): Promise<unknown> {
  try {
    await write();
  } catch (e) {
    return e;
  }
  throw new Error('the write did not fail');
}

const platformTask = (task_id: number, o: Partial<PlatformTaskRow> = {}): PlatformTaskRow => ({
  task_id,
  project_id: 100,
  customer_id: 1000,
  task_name: 'platform',
  model_key: 'k',
  model_name: 'm',
  engine: 'e',
  status: 1,
  status_name: 'running',
  ...o,
});

/** A batch of one execution (id) with one rank, changed by `o`. */
function one(id: number, o: { execution?: object; rank?: object } = {}): ExecutionBatch {
  return batch({
    executions: [execution(id, o.execution ?? {})],
    ranks: [rank(id, 0, 'brand', 1, o.rank ?? {})],
  });
}

for (const t of warehouseTargets('data-errors')) {
  describe.skipIf(t.skip)(`write failures on ${t.dialect}: data errors or not`, () => {
    let target: string;
    let w: Warehouse;
    let driver: Driver;

    beforeAll(async () => {
      target = await t.create();
      w = await openWarehouse(target, { migrate: true });
      const parsed = parseWarehouseTarget(target);
      driver =
        parsed.dialect === 'duckdb'
          ? await DuckDBDriver.open({ path: parsed.path })
          : await PostgresDriver.open({ url: parsed.url, description: 'test', logger: silentLogger });
    });
    afterAll(async () => {
      await w?.close();
      await driver?.close().catch(() => undefined);
      await t.drop();
    });

    const cases: [string, () => Promise<unknown>, RegExp][] = [
      [
        'NaN into BIGINT (a rank visibility of "-")',
        () => w.writeExecutionBatch(one(1, { rank: { visibility: NaN } })),
        /NaN.*\(execution_ranks\.visibility\)/,
      ],
      [
        'a fraction into BIGINT',
        () => w.writeExecutionBatch(one(2, { rank: { score: 1.5 } })),
        /1\.5.*\(execution_ranks\.score\)/,
      ],
      [
        'text into BIGINT',
        () => w.writeExecutionBatch(one(3, { rank: { visibility: 'abc' } })),
        /abc.*\(execution_ranks\.visibility\)/,
      ],
      [
        'a number out of INTEGER range',
        () => w.writeExecutionBatch(one(4, { execution: { hours: 3_000_000_000 } })),
        /range.*prompt_executions\.hours|3000000000.*hours/,
      ],
      [
        'a day that does not exist',
        () => w.writeExecutionBatch(one(5, { execution: { date_time: '2026-02-30' } })),
        /2026-02-30/,
      ],
      ['NOT NULL', () => w.writeExecutionBatch(one(6, { execution: { prompt_name: null } })), /prompt_name/],
      [
        'CHECK (a position of 0)',
        () => w.writeExecutionBatch(one(7, { rank: { position: 0 } })),
        /check|CHECK/,
      ],
      [
        'a small table: INTEGER out of range',
        () => w.upsertPlatformTasks([platformTask(8, { status: 3_000_000_000 })]),
        /3000000000|out of range/,
      ],
      [
        'a small table: NOT NULL',
        () => w.upsertPlatformTasks([platformTask(9, { task_name: null as unknown as string })]),
        /task_name/,
      ],
    ];
    for (const [name, write, said] of cases) {
      it(`data error: ${name}`, async () => {
        const e = await failure(write);
        const reason = w.dataError(e);
        expect(reason, String(e)).toMatch(said);
        // What is recorded is one line.
        expect(reason).not.toContain('\n');
      });
    }

    it.runIf(t.dialect === 'postgres')(
      'data error: an index row over the size limit (a brand of 10 KiB of noise)',
      async () => {
        // Free text from the API is indexed by hash in geo (no btree meets it): a btree of the
        // test's own shows the error a longer-than-2,700-byte key gives.
        const brand = randomBytes(8000).toString('base64');
        const e = await failure(() =>
          driver.connection(async (c) => {
            await c.execute('CREATE TEMP TABLE long_keys (k TEXT PRIMARY KEY)');
            await c.execute('INSERT INTO long_keys VALUES ($1)', [brand]);
          }),
        );
        expect((e as { code?: string }).code).toBe('54000');
        expect(w.dataError(e)).toMatch(/index row/);
      },
    );

    it('nothing of the failed writes was stored', async () => {
      const [row] = await w.query('SELECT count(*) AS n FROM geo.prompt_executions');
      expect(Number(row!.n)).toBe(0);
    });

    it('not data errors: a duplicate key, a lost fence, an interruption, a wrong statement', async () => {
      await driver.connection((c) =>
        c.execute(
          `INSERT INTO geo.sync_checkpoints (task_id, date, run_id, finished_at, executions) VALUES (1, CAST('2026-11-20' AS DATE), 'r', now(), 0)`,
        ),
      );
      const duplicate = await failure(() =>
        driver.connection((c) =>
          c.execute(
            `INSERT INTO geo.sync_checkpoints (task_id, date, run_id, finished_at, executions) VALUES (1, CAST('2026-11-20' AS DATE), 'r', now(), 0)`,
          ),
        ),
      );
      expect(driver.isDuplicateKey(duplicate)).toBe(true);
      expect(w.dataError(duplicate)).toBeNull();

      const fenced = w.withFence({ what: 'job lost', sql: 'SELECT 1 AS owned WHERE 1 = 0', params: [] });
      const lost = await failure(() => fenced.writeExecutionBatch(one(20)));
      expect((lost as Error).name).toBe('FenceLostError');
      expect(w.dataError(lost)).toBeNull();

      expect(w.dataError(new InterruptedError('SIGTERM'))).toBeNull();
      expect(w.dataError(new DOMException('This operation was aborted', 'AbortError'))).toBeNull();
      expect(w.dataError(await failure(() => w.query('SELECT * FROM geo.no_such_table')))).toBeNull();
      expect(w.dataError(await failure(() => w.query('SELEC 1')))).toBeNull();
      expect(w.dataError(new RangeError('Maximum call stack size exceeded'))).toBeNull();
    });

    it.runIf(t.dialect === 'postgres')('not a data error: a connection the server ended', async () => {
      const e = await failure(() =>
        driver.connection((c) => c.execute('SELECT pg_terminate_backend(pg_backend_pid())')),
      );
      expect((e as { code?: string }).code).toBe('57P01');
      expect(w.dataError(e)).toBeNull();
    });

    it.runIf(t.dialect === 'duckdb')('not a data error: a connection closed', async () => {
      const parsed = parseWarehouseTarget(target);
      const closed = await DuckDBDriver.open({ path: parsed.dialect === 'duckdb' ? parsed.path : '' });
      await closed.close();
      const e = await failure(() => closed.connection((c) => c.execute('SELECT 1')));
      expect(w.dataError(e)).toBeNull();
    });
  });
}
