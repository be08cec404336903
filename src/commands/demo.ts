/**
 * `geo-sync demo`: the main job for a new user, with nothing to set up. Starts the built-in
 * simulator in-process, syncs its last few days into a DuckDB file, and prints rows per table,
 * the top brands by average rank per platform and the most cited domains.
 */
import { Command } from 'commander';
import type { DemoOpts } from './actions/demo.ts';
import { action, parsePositiveInt } from './common.ts';

export function demoCommand(): Command {
  return new Command('demo')
    .description('sync a few days from the built-in simulator into DuckDB and show what is in it')
    .option('--days <n>', 'days to sync, ending yesterday', parsePositiveInt, 3)
    .option('--warehouse <target>', 'where to sync', 'duckdb:./data/demo.duckdb')
    .option('--seed <n>', 'simulator seed', parsePositiveInt, 1)
    .option('--executions-per-day <n>', 'simulated executions per day', parsePositiveInt, 400)
    .option('--keep', 'keep the existing demo warehouse instead of starting fresh', false)
    .action(action(async (opts: DemoOpts) => (await import('./actions/demo.ts')).demo(opts)));
}
