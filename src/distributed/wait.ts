/**
 * `backfill --distributed --wait`: follows a backfill's jobs until none is queued, waiting for a
 * retry, or active; then builds the usual run summary from the queue's job states and the
 * workers' rows in geo.sync_runs. A job pg-boss archived before it ran (its keep_until passed
 * while it was queued) is lost: reported as a failed unit that says so, never waited for.
 */
import type pg from 'pg';
import type { Warehouse } from '../load/warehouse.ts';
import { newCounters } from '../sync/context.ts';
import type { Progress, RunSummary } from '../sync/run.ts';
import type { RunStatus, SyncRunRow } from '../transform/rows.ts';
import {
  backfillJobs,
  isAccountJob,
  isLost,
  isPending,
  QUEUE_NAME,
  QUEUE_SCHEMA,
  type JobStateRow,
} from './queue.ts';

type Db = Pick<pg.ClientBase, 'query'>;

interface BackfillRow {
  dates: string[];
  customers: number;
  monitoring_tasks: number;
  platform_tasks: number;
  units_skipped: number;
  created_at: Date;
}

/** A row of geo.sync_runs of a backfill, with the job it ran (null: an enqueue). */
type BackfillRun = SyncRunRow & { job: string | null };

/** The backfill's rows in geo.sync_runs: the enqueue and every attempt of every job. */
async function backfillRuns(warehouse: Warehouse, backfill: string): Promise<BackfillRun[]> {
  const rows = await warehouse.query(
    `SELECT rows, requests, retries, rate_limited, rejects, text_values_changed, status, started_at,
       args->>'job' AS job
     FROM geo.sync_runs WHERE args->>'backfill' = $1`,
    [backfill],
  );
  return rows as unknown as BackfillRun[];
}

/**
 * The records quarantined as the backfill stands: each job's latest attempt's and the latest
 * enqueue's. An earlier run's rejects were read again by the later one (the same scope, the same
 * unit), so a record the API has since served valid no longer counts, and one still invalid counts
 * once. (Rows, requests and retries are what every run did, so they add up.)
 */
function currentRejects(runs: readonly BackfillRun[]): number {
  const latest = new Map<string, BackfillRun>();
  for (const r of runs) {
    const key = r.job ?? 'enqueue';
    const seen = latest.get(key);
    if (!seen || new Date(r.started_at).getTime() > new Date(seen.started_at).getTime()) latest.set(key, r);
  }
  let n = 0;
  for (const r of latest.values()) n += Number(r.rejects);
  return n;
}

function rowsOf(r: SyncRunRow): Record<string, number> {
  const v: unknown = typeof r.rows === 'string' ? JSON.parse(r.rows) : r.rows;
  return (v && typeof v === 'object' ? v : {}) as Record<string, number>;
}

export interface WaitOptions {
  pollMs?: number;
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
}

export async function waitForBackfill(
  db: Db,
  warehouse: Warehouse,
  backfill: string,
  opts: WaitOptions = {},
): Promise<RunSummary> {
  for (;;) {
    const jobs = await backfillJobs(db, backfill);
    const units = jobs.filter((j) => !isAccountJob(j.data));
    const runs = opts.onProgress ? await backfillRuns(warehouse, backfill) : [];
    opts.onProgress?.({
      unitsDone: units.filter((j) => !isPending(j)).length,
      unitsTotal: units.length,
      rows: runs.reduce((n, r) => n + Object.values(rowsOf(r)).reduce((a, b) => a + Number(b), 0), 0),
      requests: runs.reduce((n, r) => n + Number(r.requests), 0),
    });
    if (!jobs.some(isPending)) return summarize(db, warehouse, backfill, jobs);
    if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('aborted');
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 1000));
  }
}

export async function summarize(
  db: Db,
  warehouse: Warehouse,
  backfill: string,
  jobs: JobStateRow[],
): Promise<RunSummary> {
  const r = await db.query<BackfillRow>(
    `SELECT dates, customers, monitoring_tasks, platform_tasks, units_skipped, created_at
     FROM ${QUEUE_SCHEMA}.backfills WHERE backfill_id = $1`,
    [backfill],
  );
  const b = r.rows[0];
  if (!b) throw new Error(`no distributed backfill ${backfill} in ${QUEUE_SCHEMA}.backfills`);
  const c = newCounters();
  const api = { requests: 0, retries: 0, rateLimited: 0 };
  const runs = await backfillRuns(warehouse, backfill);
  c.rejects = currentRejects(runs);
  for (const run of runs) {
    for (const [t, n] of Object.entries(rowsOf(run))) c.rows[t] = (c.rows[t] ?? 0) + Number(n);
    c.textValuesChanged += Number(run.text_values_changed ?? 0);
    api.requests += Number(run.requests);
    api.retries += Number(run.retries);
    api.rateLimited += Number(run.rate_limited);
  }
  const failedUnits: RunSummary['failedUnits'] = [];
  let failedJobs = 0;
  for (const j of jobs) {
    if (isAccountJob(j.data)) {
      if (j.state === 'failed' || isLost(j)) failedJobs++;
      continue;
    }
    c.unitsTotal++;
    if (isLost(j)) {
      c.unitsFailed++;
      failedJobs++;
      failedUnits.push({
        unit: { task_id: j.data.task_id, date: j.data.date },
        error:
          `lost: pg-boss archived the job while it was still ${j.state} (its keep_until passed, see ` +
          'GEO_JOB_RETENTION_DAYS); run the same backfill --distributed again to queue it',
      });
    } else if (j.state === 'completed') c.unitsDone++;
    else if (j.state === 'failed' || j.state === 'cancelled') {
      c.unitsFailed++;
      failedJobs++;
      failedUnits.push({
        unit: { task_id: j.data.task_id, date: j.data.date },
        error: `${j.message ?? j.state} (after ${j.retry_count} retries)`,
      });
    }
  }
  c.unitsSkipped = b.units_skipped;
  const status: RunStatus =
    c.unitsTotal > 0 && c.unitsFailed === c.unitsTotal
      ? 'failed'
      : failedJobs > 0 || c.rejects > 0
        ? 'partial'
        : 'success';
  return {
    runId: backfill,
    status,
    dates: [...b.dates].sort(),
    // Unreadable monitoring tasks are reported by the enqueuing command, which resolved the scope.
    scope: {
      customers: b.customers,
      monitoringTasks: b.monitoring_tasks,
      platformTasks: b.platform_tasks,
      unreadable: [],
    },
    counters: c,
    api,
    startedAt: new Date(b.created_at).toISOString(),
    finishedAt: new Date().toISOString(),
    error: status === 'failed' ? 'every unit of the backfill failed' : null,
    failedUnits: failedUnits.sort(
      (x, y) => x.unit.date.localeCompare(y.unit.date) || x.unit.task_id - y.unit.task_id,
    ),
  };
}

/** One line per recent distributed backfill: its jobs by state (for `geo-sync runs`). */
export async function backfillStatusLines(db: Db, limit: number): Promise<string[]> {
  const r = await db.query<{ backfill_id: string; dates: string[]; state: string; n: string }>(
    `WITH b AS (SELECT backfill_id, dates, created_at FROM ${QUEUE_SCHEMA}.backfills
                ORDER BY created_at DESC LIMIT $2),
          jobs AS (SELECT data->>'backfill' AS backfill_id, id, state::text AS state
                   FROM ${QUEUE_SCHEMA}.job WHERE name = $1
                   UNION
                   SELECT data->>'backfill', id, state::text FROM ${QUEUE_SCHEMA}.archive a WHERE name = $1
                     AND NOT EXISTS (SELECT 1 FROM ${QUEUE_SCHEMA}.job j WHERE j.name = a.name AND j.id = a.id))
     SELECT b.backfill_id, b.dates, j.state, count(*) AS n
     FROM b JOIN jobs j USING (backfill_id)
     GROUP BY b.backfill_id, b.dates, b.created_at, j.state ORDER BY b.created_at DESC`,
    [QUEUE_NAME, limit],
  );
  const by = new Map<string, { dates: string[]; states: Record<string, number> }>();
  for (const row of r.rows) {
    const e = by.get(row.backfill_id) ?? { dates: [...row.dates].sort(), states: {} };
    e.states[row.state] = Number(row.n);
    by.set(row.backfill_id, e);
  }
  return [...by].map(([id, { dates, states }]) => {
    const open = (states.created ?? 0) + (states.retry ?? 0) + (states.active ?? 0);
    return `backfill ${id} ${dates[0]}..${dates[dates.length - 1]}: ${states.completed ?? 0} jobs done, ${states.failed ?? 0} failed, ${open} queued or running`;
  });
}
