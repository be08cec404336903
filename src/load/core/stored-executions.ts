/**
 * What the warehouse tells a run about what it already holds, before the run reads the API: each
 * unit's stored executions with the fingerprints of those read completely (change detection and
 * the cross-check), a day's units at once, and the counts `--dry-run` estimates from.
 */
import type { StoredUnitCounts, StoredUnitExecutions } from '../warehouse.ts';
import { unitKeyOf } from '../values.ts';
import type { Driver } from './driver.ts';

interface StoredExecutionRow {
  task_id: number | string;
  prompt_task_id: number | string;
  fingerprint: string | null;
  children_complete: boolean | null;
}

/** Stored executions by platform task: every id, and the fingerprints of those read completely. */
function byUnit(rows: readonly StoredExecutionRow[]): Map<number, StoredUnitExecutions> {
  const out = new Map<number, StoredUnitExecutions>();
  for (const r of rows) {
    const task = Number(r.task_id);
    let stored = out.get(task);
    if (!stored) out.set(task, (stored = { ids: new Set(), complete: new Map() }));
    const id = Number(r.prompt_task_id);
    stored.ids.add(id);
    if (r.children_complete && r.fingerprint !== null) stored.complete.set(id, r.fingerprint);
  }
  return out;
}

/**
 * The stored executions of the units of `date` and `taskIds`, by platform task; null when there
 * are more than `max` (none is read past it).
 */
async function storedOf(
  driver: Driver,
  date: string,
  taskIds: readonly number[],
  max?: number,
): Promise<Map<number, StoredUnitExecutions> | null> {
  const limit = max === undefined ? '' : `LIMIT CAST($3 AS ${driver.types.bigint})`;
  const rows = await driver.connection((c) =>
    c.rows<StoredExecutionRow>(
      `SELECT e.task_id, e.prompt_task_id, f.fingerprint, f.children_complete
         FROM geo.prompt_executions e LEFT JOIN geo.execution_fingerprints f ON f.prompt_task_id = e.prompt_task_id
         WHERE e.date_time = CAST($1 AS ${driver.types.date}) AND ${driver.inIds('e.task_id', 2)}
         ${limit}`,
      max === undefined ? [date, [...taskIds]] : [date, [...taskIds], max + 1],
    ),
  );
  return max !== undefined && rows.length > max ? null : byUnit(rows);
}

/** One unit's stored executions. */
export async function unitExecutions(
  driver: Driver,
  task_id: number,
  date: string,
): Promise<StoredUnitExecutions> {
  const units = await storedOf(driver, date, [task_id]);
  return units?.get(task_id) ?? { ids: new Set(), complete: new Map() };
}

/** unitExecutions of the day's units of `taskIds` in one read; null above `max` executions. */
export function dayExecutions(
  driver: Driver,
  date: string,
  taskIds: readonly number[],
  max: number,
): Promise<Map<number, StoredUnitExecutions> | null> {
  return storedOf(driver, date, taskIds, max);
}

export async function storedUnits(
  driver: Driver,
  dates: readonly string[],
): Promise<Map<string, StoredUnitCounts>> {
  const unique = [...new Set(dates)];
  if (unique.length === 0) return new Map();
  const d = driver.types.date;
  const days = unique.map((_, i) => `CAST($${i + 1} AS ${d})`).join(', ');
  // A unit is known by its checkpoint (it may have no execution) or by executions stored by a
  // run that did not finish it.
  const [checkpoints, executions] = await driver.connection(async (c) => [
    await c.rows<{ task_id: number; date: string }>(
      `SELECT task_id, date FROM geo.sync_checkpoints WHERE date IN (${days})`,
      unique,
    ),
    await c.rows<{
      task_id: number;
      date: string;
      executions: number;
      complete: number;
      without_screenshot: number;
      unsupported: number;
    }>(
      `SELECT e.task_id, e.date_time AS date, COUNT(*) AS executions, COUNT(f.prompt_task_id) AS complete,
           COUNT(CASE WHEN e.screenshot_url IS NULL OR e.screenshot_url = '' THEN 1 END) AS without_screenshot,
           COUNT(CASE WHEN p.supported = FALSE OR p.result_status = 'unsupported' THEN 1 END) AS unsupported
         FROM geo.prompt_executions e
         LEFT JOIN geo.execution_fingerprints f ON f.prompt_task_id = e.prompt_task_id AND f.children_complete
         LEFT JOIN geo.execution_products p ON p.prompt_task_id = e.prompt_task_id
         WHERE e.date_time IN (${days})
         GROUP BY e.task_id, e.date_time`,
      unique,
    ),
  ]);
  const out = new Map<string, StoredUnitCounts>();
  for (const r of checkpoints)
    out.set(unitKeyOf(Number(r.task_id), r.date), {
      executions: 0,
      complete: 0,
      withoutScreenshot: 0,
      unsupported: 0,
    });
  for (const r of executions)
    out.set(unitKeyOf(Number(r.task_id), r.date), {
      executions: Number(r.executions),
      complete: Number(r.complete),
      withoutScreenshot: Number(r.without_screenshot),
      unsupported: Number(r.unsupported),
    });
  return out;
}
