/**
 * `geo-sync check`: the warehouse's data tests (src/quality/checks.ts), one line each; exit 0
 * when all pass, 3 otherwise.
 */
import { Command } from 'commander';
import { formatCheckResults, runChecks } from '../quality/checks.ts';
import { EXIT } from '../sync/exit-codes.ts';
import {
  action,
  configFrom,
  loggerFor,
  openStoppableWarehouse,
  parseDay,
  parsePositiveInt,
  weekRange,
  withCommonOptions,
  type CommonOpts,
} from './common.ts';

interface CheckOpts extends CommonOpts {
  from?: string;
  to?: string;
  json: boolean;
  maxAgeHours?: number;
}

export function checkCommand(): Command {
  return withCommonOptions(new Command('check'))
    .description(
      'data tests: keys unique, no orphan rows, every unit finished with the executions its listing reported, aggregates equal to their rows, freshness (exit 3 when one fails)',
    )
    .option('--from <YYYY-MM-DD>', 'first day (default: 6 days before --to)', parseDay)
    .option('--to <YYYY-MM-DD>', 'last day, inclusive (default: yesterday, Asia/Shanghai)', parseDay)
    .option(
      '--max-age-hours <n>',
      'freshness: hours since the last successful run, at most (default 26)',
      parsePositiveInt,
    )
    .option('--json', 'one JSON object per check', false)
    .action(
      action(async (opts: CheckOpts) => {
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
      }),
    );
}
