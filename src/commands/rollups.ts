/**
 * `geo-sync rollups refresh [--from D --to D]`: recomputes the per-day aggregates (geo.rollup_*)
 * from the execution tables, for a user who restored a backup or edited rows by hand. The sync
 * keeps them right by itself; `check` (rollups_match) tells when they are not.
 */
import { Command } from 'commander';
import type { RefreshOpts } from './actions/rollups.ts';
import { action, parseDay, parseNonNegativeInt, withCommonOptions } from './common.ts';

function refreshCommand(): Command {
  return withCommonOptions(new Command('refresh'))
    .description(
      'recompute the per-day aggregates the views read from the execution tables, for --from..--to ' +
        '(every day without a range): after restoring a backup or editing rows by hand',
    )
    .option('--from <YYYY-MM-DD>', 'first day (with --to)', parseDay)
    .option('--to <YYYY-MM-DD>', 'last day, inclusive (with --from)', parseDay)
    .option('--wait-for-lock <seconds>', 'wait this long for a running sync to end', parseNonNegativeInt, 0)
    .option('--no-progress', 'no progress bar')
    .action(action(async (opts: RefreshOpts) => (await import('./actions/rollups.ts')).refresh(opts)));
}

export function rollupsCommand(): Command {
  return new Command('rollups')
    .description('the per-day aggregates the views read (kept by every sync)')
    .addCommand(refreshCommand());
}
