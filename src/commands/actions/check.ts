/**
 * `geo-sync check`: the warehouse's data tests (src/quality/checks.ts), one line each; exit 0
 * when all pass, 3 otherwise.
 */
import { formatCheckResults, runChecks } from '../../quality/checks.ts';
import { EXIT } from '../../sync/exit-codes.ts';
import { weekRange, type CommonOpts } from '../common.ts';
import { configFrom, loggerFor, openStoppableWarehouse } from './common.ts';

export interface CheckOpts extends CommonOpts {
  from?: string;
  to?: string;
  json: boolean;
  maxAgeHours?: number;
}

export async function check(opts: CheckOpts): Promise<number> {
  const { from, to } = weekRange(opts);
  const config = configFrom(opts);
  const warehouse = await openStoppableWarehouse(config, loggerFor(config));
  try {
    const results = await runChecks(warehouse, {
      from,
      to,
      ...(opts.maxAgeHours !== undefined ? { maxAgeHours: opts.maxAgeHours } : {}),
    });
    if (opts.json) {
      for (const r of results) process.stdout.write(JSON.stringify({ from, to, ...r }) + '\n');
    } else {
      process.stdout.write(`checks of ${warehouse.description}, ${from} .. ${to}:\n`);
      process.stdout.write(formatCheckResults(results) + '\n');
    }
    return results.every((r) => r.passed) ? EXIT.success : EXIT.partial;
  } finally {
    await warehouse.close();
  }
}
