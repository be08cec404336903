/** `geo-sync migrate` and `geo-sync runs`. */
import { Command } from 'commander';
import type { RunsOpts } from './actions/warehouse.ts';
import { action, parsePositiveInt, withCommonOptions, type CommonOpts } from './common.ts';

export function migrateCommand(): Command {
  return withCommonOptions(new Command('migrate'))
    .description('apply missing migrations and re-create the views (safe to run twice, and concurrently)')
    .action(action(async (opts: CommonOpts) => (await import('./actions/warehouse.ts')).migrate(opts)));
}

export function runsCommand(): Command {
  return withCommonOptions(new Command('runs'))
    .description('list recent runs from geo.sync_runs')
    .option('--limit <n>', 'how many', parsePositiveInt, 20)
    .option('--json', 'one JSON object per line', false)
    .action(action(async (opts: RunsOpts) => (await import('./actions/warehouse.ts')).runs(opts)));
}
