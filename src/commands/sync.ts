/** `geo-sync sync` and `geo-sync backfill`: one planner, one run, a summary, an exit code. */
import { Command, Option } from 'commander';
import type { BackfillOpts, SyncOpts } from './actions/sync.ts';
import { action, collectIds, parseDay, parseNonNegativeInt, withCommonOptions } from './common.ts';

function withRunOptions(cmd: Command): Command {
  return withCommonOptions(cmd)
    .option(
      '--customer <id>',
      'page project ID (customer_id) to sync; repeatable or comma-separated',
      collectIds,
    )
    .option('--force', 're-sync units already finished', false)
    .option('--reread', "read every execution's children, even those change detection finds unchanged", false)
    .option('--dry-run', 'print the plan (units, estimated requests) and write nothing', false)
    .addOption(
      new Option(
        '--wait-for-lock <seconds>',
        'wait this long for another run to finish instead of exiting',
      ).argParser(parseNonNegativeInt),
    )
    .option('--no-progress', 'no progress bar or progress lines');
}

export function syncCommand(): Command {
  return withRunOptions(new Command('sync'))
    .description('sync one day (default: yesterday in Asia/Shanghai)')
    .option('--date <YYYY-MM-DD>', 'the day to sync', parseDay)
    .action(
      action(async (opts: SyncOpts & { date?: string }) => (await import('./actions/sync.ts')).sync(opts)),
    );
}

export function backfillCommand(): Command {
  return withRunOptions(new Command('backfill'))
    .description('sync every day from --from to --to, both inclusive; finished units are skipped')
    .requiredOption('--from <YYYY-MM-DD>', 'first day', parseDay)
    .requiredOption('--to <YYYY-MM-DD>', 'last day (inclusive)', parseDay)
    .option(
      '--distributed',
      'queue one job per unit in PostgreSQL for `geo-sync worker` processes instead of running here',
      false,
    )
    .option('--wait', 'with --distributed: follow the jobs until all finished, then print the summary', false)
    .option(
      '--retry-failed',
      'with --distributed: queue again the jobs of this backfill that failed for good or were cancelled',
      false,
    )
    .action(action(async (opts: BackfillOpts) => (await import('./actions/sync.ts')).backfill(opts)));
}
