/**
 * When a run refreshes the aggregates of the units its writes marked stale
 * (Warehouse.refreshStaleRollups). Writes only mark units (nothing read back); a refresh reads the
 * marked units' rows once and replaces their aggregate rows, set-based. During a run it refreshes
 * after every REFRESH_EVERY_EXECUTIONS executions written or REFRESH_EVERY_MS since the last, so
 * the dashboards of a long backfill trail its writes by a bounded amount; a run always refreshes
 * at its end, so at rest nothing is stale. A refresh that fails leaves its markers (the views
 * stay behind, never wrong for the units not marked): the next refresh, or the next run, redoes it.
 */
import type { Logger } from 'pino';
import type { StaleRefresh, Warehouse } from '../load/warehouse.ts';

/** Executions written between two refreshes during a run (about a day of a large account). */
export const REFRESH_EVERY_EXECUTIONS = 20_000;
/** Or this long since the last refresh, whichever comes first. */
export const REFRESH_EVERY_MS = 60_000;

export class RollupRefresher {
  private written = 0;
  private last: number;
  /** Totals over the run, for its log line. */
  readonly done: StaleRefresh = { units: 0, executions: 0, batches: 0 };

  constructor(
    private readonly warehouse: Pick<Warehouse, 'refreshStaleRollups'>,
    private readonly logger: Logger,
    private readonly clock: () => number = Date.now,
    private readonly every = { executions: REFRESH_EVERY_EXECUTIONS, ms: REFRESH_EVERY_MS },
  ) {
    this.last = clock();
  }

  /**
   * After a write transaction committed `executions` executions. Refreshes when due; its failure
   * is logged, never thrown: the rows are committed and their markers wait for the next refresh.
   */
  async wrote(executions: number): Promise<void> {
    this.written += executions;
    if (this.written === 0) return;
    const due = this.written >= this.every.executions || this.clock() - this.last >= this.every.ms;
    if (!due) return;
    try {
      await this.refresh();
    } catch (e) {
      this.logger.warn({ err: e }, 'the aggregates of the units written could not be refreshed yet');
    }
  }

  /** At the end of a run or job: refreshes every stale unit; throws when it cannot. */
  async finish(): Promise<StaleRefresh> {
    await this.refresh();
    return this.done;
  }

  private async refresh(): Promise<void> {
    this.written = 0;
    this.last = this.clock();
    const r = await this.warehouse.refreshStaleRollups();
    this.done.units += r.units;
    this.done.executions += r.executions;
    this.done.batches += r.batches;
    if (r.units > 0) this.logger.debug({ ...r }, 'aggregates refreshed');
  }
}
