/**
 * `geo-sync state show|reset`: what the warehouse records about units (platform task, day), and
 * forgetting checkpoints so that the next run re-reads exactly those units.
 */
import { Command } from 'commander';
import type { ResetOpts, ShowOpts } from './actions/state.ts';
import { action, collectIds, parseDay, withCommonOptions } from './common.ts';

function showCommand(): Command {
  return withCommonOptions(new Command('show'))
    .description('per day: units finished, failed, never run (default: the 7 days through yesterday)')
    .option('--from <YYYY-MM-DD>', 'first day', parseDay)
    .option('--to <YYYY-MM-DD>', 'last day (inclusive)', parseDay)
    .option('--units', 'also list every unit that is not finished', false)
    .option('--json', 'one JSON object per day', false)
    .action(action(async (opts: ShowOpts) => (await import('./actions/state.ts')).show(opts)));
}

function resetCommand(): Command {
  return withCommonOptions(new Command('reset'))
    .description(
      'forget the checkpoints (and change-detection fingerprints) of the units of --from..--to so the next run re-reads them whole',
    )
    .requiredOption('--from <YYYY-MM-DD>', 'first day', parseDay)
    .requiredOption('--to <YYYY-MM-DD>', 'last day (inclusive)', parseDay)
    .option('--task <id>', 'only this platform task (task_id); repeatable or comma-separated', collectIds)
    .action(action(async (opts: ResetOpts) => (await import('./actions/state.ts')).reset(opts)));
}

export function stateCommand(): Command {
  return new Command('state')
    .description('what the warehouse records about units (platform task, day); forget checkpoints')
    .addCommand(showCommand())
    .addCommand(resetCommand());
}
