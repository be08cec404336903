/**
 * `geo-sync check`: the warehouse's data tests (src/quality/checks.ts), one line each; exit 0
 * when all pass, 3 otherwise.
 */
import { Command } from 'commander';
import type { CheckOpts } from './actions/check.ts';
import { action, parseDay, parsePositiveInt, withCommonOptions } from './common.ts';

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
    .action(action(async (opts: CheckOpts) => (await import('./actions/check.ts')).check(opts)));
}
