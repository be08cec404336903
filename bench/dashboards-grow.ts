/**
 * A year of a large account, grown from a synced day (the dashboards scenario): the warehouse
 * holds one day synced from the simulator (its monitoring tasks, platform tasks, executions and
 * children, as the API shapes them); this copies that account `copies` times (new monitoring and
 * platform task IDs, so units stay the size the API gives them) and that day onto every day of
 * the year, by INSERT ... SELECT inside the warehouse (no row passes through JavaScript).
 *
 * Shaped to a real large account (per execution 8 sources, ~2 rank items): every other
 * source and rank item of the synced day is kept; 40% of the sources cite a long tail of 20,000
 * domains instead (the simulator cites a few dozen); one product card per execution.
 */
import { ACCOUNT_ROLLUP_TABLES, ROLLUP_TABLES } from '../dist/load/tables.js';

type Dialect = 'postgres' | 'duckdb';

export interface Growth {
  /** Days, ending on the synced day. */
  days: number;
  /** Copies of the synced account: executions per day = copies x the synced day's. */
  copies: number;
}

/** Statements that run through the warehouse's own connection, one after another. */
export type Exec = (sql: string) => Promise<void>;

const SEED = 'bench_seed';
/** Grown IDs: far above the simulator's (at most ~3.5e15 for sources), under 2^53. */
const ID_BASE = 4_000_000_000_000_000;

function series(dialect: Dialect, n: number, alias: string): string {
  return dialect === 'postgres'
    ? `generate_series(0, ${n - 1}) AS ${alias}(v)`
    : `range(0, ${n}) AS ${alias}(v)`;
}

/** The tables copied, with how a column of the copy is made (others as in the synced day). */
function plan(g: Growth): { table: string; from: string; columns: Record<string, string>; where?: string }[] {
  // The copy's block: day d (0 = the oldest) and copy c.
  const block = `(d.v * ${g.copies} + c.v)`;
  const day = `CAST(s.date_time + CAST(d.v - ${g.days - 1} AS INTEGER) AS DATE)`;
  const task = `(s.task_id * 100 + c.v)`;
  const project = `(s.project_id * 100 + c.v)`;
  const execution = `(${ID_BASE} + ${block} * n.executions + x.i)`;
  const grid = (alias = 'x') =>
    `JOIN ${SEED}.exec_index ${alias} ON ${alias}.prompt_task_id = s.prompt_task_id CROSS JOIN ${SEED}.counts n`;
  return [
    {
      table: 'monitoring_tasks',
      from: `${SEED}.monitoring_tasks s`,
      columns: {
        project_id: project,
        project_name: `s.project_name || ' #' || CAST(c.v AS VARCHAR)`,
      },
    },
    {
      table: 'platform_tasks',
      from: `${SEED}.platform_tasks s`,
      columns: { task_id: task, project_id: project },
    },
    {
      table: 'prompt_executions',
      // Its children's counts as the copies below keep them (every other rank and source, the
      // first card): what the writer would have stored for such an execution.
      from: `${SEED}.prompt_executions s ${grid()} JOIN ${SEED}.exec_counts k ON k.prompt_task_id = s.prompt_task_id`,
      columns: {
        prompt_task_id: execution,
        task_id: task,
        project_id: project,
        date_time: day,
        rank_items: 'k.rank_items',
        valid_ranks: 'k.valid_ranks',
        sources: 'k.sources',
        product_cards: 'k.product_cards',
      },
    },
    {
      table: 'execution_ranks',
      from: `${SEED}.execution_ranks s ${grid()}`,
      columns: { prompt_task_id: execution },
      where: 's.ordinal % 2 = 0',
    },
    {
      table: 'execution_sources',
      from: `${SEED}.execution_sources s ${grid()} JOIN ${SEED}.source_index y ON y.source_id = s.source_id`,
      columns: {
        source_id: `(${ID_BASE} + ${block} * n.sources + y.i)`,
        prompt_task_id: execution,
        task_id: task,
        project_id: project,
        domain: `CASE WHEN (y.i * 7919 + ${block} * 104729) % 10 < 4
          THEN 'site' || CAST((y.i * 7919 + ${block} * 31) % 20000 AS VARCHAR) || '.example.cn' ELSE s.domain END`,
      },
      where: 'y.i % 2 = 0',
    },
    {
      table: 'execution_screenshots',
      from: `${SEED}.execution_screenshots s ${grid()}`,
      columns: { prompt_task_id: execution, task_id: task, project_id: project },
    },
    {
      table: 'execution_products',
      from: `${SEED}.execution_products s ${grid()}`,
      columns: { prompt_task_id: execution },
    },
    {
      table: 'product_cards',
      from: `${SEED}.product_cards s ${grid()}`,
      columns: { prompt_task_id: execution },
      where: 's.position = 0',
    },
  ];
}

/** The columns of a geo table, in order (as the warehouse has them). */
export type ColumnsOf = (table: string) => Promise<string[]>;

/**
 * Grows the warehouse's synced day into a year (see the file comment). The synced rows are
 * replaced by their copies; the aggregates are left for the caller to refresh.
 */
export async function growYear(dialect: Dialect, exec: Exec, columnsOf: ColumnsOf, g: Growth): Promise<void> {
  const steps = plan(g);
  await exec(`DROP SCHEMA IF EXISTS ${SEED} CASCADE`);
  await exec(`CREATE SCHEMA ${SEED}`);
  for (const s of steps) await exec(`CREATE TABLE ${SEED}.${s.table} AS SELECT * FROM geo.${s.table}`);
  await exec(
    `CREATE TABLE ${SEED}.exec_index AS SELECT prompt_task_id, row_number() OVER (ORDER BY prompt_task_id) - 1 AS i
     FROM ${SEED}.prompt_executions`,
  );
  await exec(
    `CREATE TABLE ${SEED}.source_index AS SELECT source_id, row_number() OVER (ORDER BY source_id) - 1 AS i
     FROM ${SEED}.execution_sources`,
  );
  await exec(
    `CREATE TABLE ${SEED}.exec_counts AS SELECT e.prompt_task_id,
       (SELECT count(*) FROM ${SEED}.execution_ranks r WHERE r.prompt_task_id = e.prompt_task_id AND r.ordinal % 2 = 0) AS rank_items,
       (SELECT count(r.position) FROM ${SEED}.execution_ranks r WHERE r.prompt_task_id = e.prompt_task_id AND r.ordinal % 2 = 0) AS valid_ranks,
       (SELECT count(*) FROM ${SEED}.execution_sources x JOIN ${SEED}.source_index y ON y.source_id = x.source_id
        WHERE x.prompt_task_id = e.prompt_task_id AND y.i % 2 = 0) AS sources,
       (SELECT count(*) FROM ${SEED}.product_cards k WHERE k.prompt_task_id = e.prompt_task_id AND k.position = 0) AS product_cards
     FROM ${SEED}.prompt_executions e`,
  );
  await exec(
    `CREATE TABLE ${SEED}.counts AS SELECT (SELECT count(*) FROM ${SEED}.exec_index) AS executions,
       (SELECT count(*) FROM ${SEED}.source_index) AS sources`,
  );
  const cleared = [...steps.map((s) => s.table), 'execution_fingerprints', 'sync_checkpoints'];
  for (const t of [...cleared, ...[...ROLLUP_TABLES, ...ACCOUNT_ROLLUP_TABLES].map((r) => r.table)])
    await exec(`DELETE FROM geo.${t}`);
  for (const s of steps) {
    const perDay = s.table === 'monitoring_tasks' || s.table === 'platform_tasks' ? false : true;
    const cols = await columnsOf(s.table);
    const select = cols
      .filter((c) => c !== 'synced_at')
      .map((c) => `${s.columns[c] ?? `s.${c}`}`)
      .join(', ');
    const grid = perDay
      ? `CROSS JOIN ${series(dialect, g.days, 'd')} CROSS JOIN ${series(dialect, g.copies, 'c')}`
      : `CROSS JOIN ${series(dialect, g.copies, 'c')}`;
    // Day by day order: rows land in the order a nightly sync appends them.
    const order = perDay ? ' ORDER BY d.v, c.v' : '';
    await exec(
      `INSERT INTO geo.${s.table} (${cols.filter((c) => c !== 'synced_at').join(', ')})
       SELECT ${select} FROM ${s.from} ${grid}${s.where ? ` WHERE ${s.where}` : ''}${order}`,
    );
  }
  await exec(`DROP SCHEMA ${SEED} CASCADE`);
}
