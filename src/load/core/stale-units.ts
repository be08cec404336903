/**
 * The invalidation log of the per-day aggregates (geo.rollup_stale_units): a write marks the units
 * whose rows it changed, and a refresh deletes the marks it finds, as it reads them, and
 * recomputes their units (rollups.ts) in the same transaction. rollups.ts's header says what a
 * reader sees meanwhile.
 */
import { DIALECT_SQL } from '../dialect-sql.ts';
import type { Connection, Driver } from './driver.ts';
import {
  distinctUnits,
  inBatches,
  Params,
  recomputeRollups,
  REFRESH_BATCH_EXECUTIONS,
  scopeWhere,
  unitLockKey,
  type Dialected,
  type RollupUnit,
} from './rollups.ts';

/**
 * Records the units as stale, inside the caller's write transaction (one statement, nothing
 * read): their aggregates are refreshed later (refreshStaleUnits), by the sync or by
 * `rollups refresh`. Each marker gets its own number (a sequence, the table's key): a unit written
 * by several transactions has several markers, and a refresh deletes those it finds.
 */
export async function markStale(
  _driver: Dialected,
  c: Connection,
  units: readonly RollupUnit[],
): Promise<void> {
  const list = distinctUnits(units);
  if (list.length === 0) return;
  await c.execute(
    `INSERT INTO geo.rollup_stale_units (task_id, date)
     SELECT t, CAST(d AS DATE) FROM (
       SELECT unnest(CAST($1 AS BIGINT[])) AS t, unnest(CAST($2 AS VARCHAR[])) AS d) u`,
    [list.map((u) => u.task_id), list.map((u) => u.date)],
  );
}

/** Stale units to refresh together: whole units, at most REFRESH_BATCH_EXECUTIONS executions. */
export interface StaleBatch {
  readonly units: RollupUnit[];
  readonly executions: number;
}

/** The stale units, oldest day first, in batches of at most `max` executions (a larger unit alone). */
export async function staleBatches(c: Connection, max = REFRESH_BATCH_EXECUTIONS): Promise<StaleBatch[]> {
  const rows = await c.rows<{ task_id: number; date: string; executions: number | string }>(
    `SELECT s.task_id, s.date, (SELECT count(*) FROM geo.prompt_executions e
       WHERE e.task_id = s.task_id AND e.date_time = s.date) AS executions
     FROM (SELECT DISTINCT task_id, date FROM geo.rollup_stale_units) s
     ORDER BY s.date, s.task_id`,
  );
  const units = rows.map((r) => ({
    task_id: Number(r.task_id),
    date: r.date,
    executions: Number(r.executions),
  }));
  return inBatches(units, (u) => u.executions, max).map((batch) => ({
    units: batch.map((u) => ({ task_id: u.task_id, date: u.date })),
    executions: batch.reduce((n, u) => n + u.executions, 0),
  }));
}

/**
 * Refreshes stale units inside the caller's transaction: takes their locks (PostgreSQL: another
 * refresh of a unit waits, then finds its markers gone), deletes their markers as they stand,
 * reading them in the same statement, and recomputes the units that had one from their rows (the
 * SQL of SELECTS). A writer that commits meanwhile leaves a marker this did not delete: the unit
 * stays stale and is refreshed again. Returns the units refreshed.
 */
export async function refreshStaleUnits(
  driver: Driver,
  c: Connection,
  units: readonly RollupUnit[],
): Promise<RollupUnit[]> {
  if (units.length === 0) return [];
  await lockUnits(driver, c, units);
  const p = new Params();
  // The markers as they stand, deleted as they are read (one statement, not a read and a delete
  // by their numbers): a marker a writer commits later is not among them, and stays. The
  // transaction's failure puts them back.
  const marks = await c.rows<{ task_id: number | string; date: string }>(
    `DELETE FROM geo.rollup_stale_units AS r
     WHERE ${scopeWhere(driver, { units }, p, 'r.date', 'r.task_id')}
     RETURNING task_id, date`,
    p.values,
  );
  if (marks.length === 0) return [];
  const present = distinctUnits(marks.map((m) => ({ task_id: Number(m.task_id), date: m.date })));
  // A writer of the aggregates before reading the hosts: a change of brand_urls holds writers
  // off while it decides `owned` again (decideOwnership), so no row is decided against old hosts.
  const asWriter = DIALECT_SQL[driver.dialect].lockAsWriter('geo.rollup_domains_daily');
  if (asWriter) await c.execute(asWriter);
  // DuckDB reads each child table by the units' execution ids (their range skips row groups);
  // PostgreSQL reaches the children through their index on prompt_task_id, ids or not.
  let ids: number[] | undefined;
  if (driver.dialect === 'duckdb') {
    const q = new Params();
    const rows = await c.rows<{ prompt_task_id: number | string }>(
      `SELECT prompt_task_id FROM geo.prompt_executions AS e
       WHERE ${scopeWhere(driver, { units: present }, q, 'e.date_time', 'e.task_id')}`,
      q.values,
    );
    ids = rows.map((r) => Number(r.prompt_task_id));
  }
  await recomputeRollups(driver, c, ids ? { units: present, ids } : { units: present });
  return present;
}

/**
 * The markers of the days `from`..`to` as they stand, deleted: `rollups refresh` recomputes those
 * days whole in the same transaction, after this (under the warehouse lock, no sync writes then).
 */
export async function clearStaleDays(c: Connection, from: string, to: string): Promise<void> {
  await c.execute(
    'DELETE FROM geo.rollup_stale_units WHERE date BETWEEN CAST($1 AS DATE) AND CAST($2 AS DATE)',
    [from, to],
  );
}

/**
 * PostgreSQL runs writers at once (distributed workers): two transactions recomputing one unit
 * would each delete the rows they saw and insert their own, leaving both. A lock per unit, taken
 * in one order, makes the second wait for the first and then see its rows.
 */
async function lockUnits(driver: Driver, c: Connection, units: readonly RollupUnit[]): Promise<void> {
  const keys = [...new Set(units.map(unitLockKey))].sort((a, b) => a - b);
  const sql = DIALECT_SQL[driver.dialect].lockKeys(keys.length);
  if (sql) await c.execute(sql, keys);
}
