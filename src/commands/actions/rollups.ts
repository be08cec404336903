/**
 * `geo-sync rollups refresh [--from D --to D]`: recomputes the per-day aggregates (geo.rollup_*)
 * from the execution tables, for a user who restored a backup or edited rows by hand. The sync
 * keeps them right by itself; `check` (rollups_match) tells when they are not.
 */
import cliProgress from 'cli-progress';
import { openMigratedWarehouse } from '../../app-warehouse.ts';
import { UsageError } from '../../errors.ts';
import { batchDays } from '../../load/core/rollups.ts';
import { acquireLock, lockHolder } from '../../sync/lock.ts';
import { checkDayOrder, type CommonOpts, stopSignal } from '../common.ts';
import { configFrom, loggerFor } from './common.ts';

export interface RefreshOpts extends CommonOpts {
  from?: string;
  to?: string;
  progress: boolean;
  waitForLock: number;
}

/** `rollups refresh`. */
export async function refresh(opts: RefreshOpts): Promise<void> {
  if ((opts.from === undefined) !== (opts.to === undefined))
    throw new UsageError('--from and --to go together (or neither: every day)');
  checkDayOrder(opts.from, opts.to);
  const range = opts.from && opts.to ? { from: opts.from, to: opts.to } : undefined;
  const config = configFrom(opts);
  const logger = loggerFor(config);
  const signal = stopSignal(logger);
  const warehouse = await openMigratedWarehouse(config, logger, { signal, interruptible: true });
  try {
    // Under the lock: a sync writing meanwhile would recompute its units alongside.
    await acquireLock(warehouse, lockHolder('rollups refresh'), {
      waitMs: opts.waitForLock * 1000,
      signal,
      onWait: (holder) => logger.info({ holder }, 'waiting for the warehouse lock'),
    });
    const days = await warehouse.rollupDays(range);
    const batches = batchDays(days);
    const executions = days.reduce((a, d) => a + d.executions, 0);
    const scope = range ? `${range.from} .. ${range.to}` : 'every day';
    if (days.length === 0) {
      process.stdout.write(`nothing to refresh in ${scope}: no executions and no aggregate rows\n`);
      return;
    }
    const bar = opts.progress && process.stderr.isTTY ? dayBar(days.length) : null;
    let done = 0;
    try {
      for (const b of batches) {
        signal.throwIfAborted();
        await warehouse.refreshRollups(b.from, b.to);
        done += b.days;
        if (bar) bar.update(done);
        else logger.info({ from: b.from, to: b.to, days: done, of: days.length }, 'aggregates refreshed');
      }
    } finally {
      bar?.stop();
    }
    await warehouse.analyzeRollups();
    process.stdout.write(
      `refreshed the per-day aggregates of ${days.length} day(s) (${executions} executions) in ${scope}, ` +
        `${batches.length} transaction(s)\n`,
    );
  } finally {
    await warehouse.close();
  }
}

function dayBar(total: number): cliProgress.SingleBar {
  const bar = new cliProgress.SingleBar(
    { format: 'days {bar} {value}/{total} | ETA {eta_formatted}', hideCursor: true, stream: process.stderr },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  return bar;
}
