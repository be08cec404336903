/**
 * `geo-sync verify [--date D | --from D --to D] [--sample N]`: re-reads N stored
 * executions chosen at random and compares them field by field with the stored rows.
 * Exit 0: no difference; 3: some (printed one a line). Change detection is safe on an account
 * where this finds nothing night after night.
 */
import { createApi, UsageError } from '../../app.ts';
import { EXIT } from '../../sync/exit-codes.ts';
import { formatVerify, verifyPassed, verifyExecutions } from '../../sync/verify.ts';
import { type CommonOpts, stopSignal, checkDayOrder } from '../common.ts';
import { configFrom, loggerFor, openStoppableWarehouse } from './common.ts';

export interface VerifyOpts extends CommonOpts {
  date?: string;
  from?: string;
  to?: string;
  sample: number;
}

function rangeOf(opts: VerifyOpts): { from: string; to: string } | undefined {
  if (opts.date && (opts.from || opts.to)) throw new UsageError('--date: give either --date or --from/--to');
  if (opts.date) return { from: opts.date, to: opts.date };
  if (!opts.from && !opts.to) return undefined;
  if (!opts.from || !opts.to) throw new UsageError('--from and --to go together (or use --date)');
  checkDayOrder(opts.from, opts.to);
  return { from: opts.from, to: opts.to };
}

export async function verify(opts: VerifyOpts): Promise<number> {
  const range = rangeOf(opts);
  const config = configFrom(opts);
  const logger = loggerFor(config);
  const signal = stopSignal(logger);
  const api = createApi(config, logger, { signal });
  try {
    const warehouse = await openStoppableWarehouse(config, logger);
    try {
      const result = await verifyExecutions(api.port, warehouse, {
        sample: opts.sample,
        ...(range ? { range } : {}),
        legacySources: config.enrich.legacySources,
        executionTimes: config.enrich.executionTimes,
      });
      // Stopped: the reads the stop cut short are no verdict on the warehouse; none printed.
      signal.throwIfAborted();
      process.stdout.write(formatVerify(result) + '\n');
      return verifyPassed(result) ? EXIT.success : EXIT.partial;
    } finally {
      await warehouse.close();
    }
  } finally {
    await api.close();
  }
}
