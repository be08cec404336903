/**
 * `geo-sync verify [--date D | --from D --to D] [--sample N]`: re-reads N stored
 * executions chosen at random and compares them field by field with the stored rows.
 * Exit 0: no difference; 3: some (printed one a line). Change detection is safe on an account
 * where this finds nothing night after night.
 */
import { Command } from 'commander';
import type { VerifyOpts } from './actions/verify.ts';
import { action, parseDay, parsePositiveInt, withCommonOptions } from './common.ts';

export function verifyCommand(): Command {
  return withCommonOptions(new Command('verify'))
    .description(
      're-read N random stored executions (their own endpoints and children) and compare every table built from them with the warehouse (exit 3 on a difference)',
    )
    .option('--date <YYYY-MM-DD>', 'only executions of this day', parseDay)
    .option('--from <YYYY-MM-DD>', 'first day', parseDay)
    .option('--to <YYYY-MM-DD>', 'last day (inclusive)', parseDay)
    .option('--sample <n>', 'executions to re-read', parsePositiveInt, 50)
    .action(action(async (opts: VerifyOpts) => (await import('./actions/verify.ts')).verify(opts)));
}
