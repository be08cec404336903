/**
 * `geo-sync schedule`: a long-running process that syncs yesterday plus the look-back window on a
 * cron schedule in Asia/Shanghai time (what it does: actions/schedule.ts).
 */
import { Command } from 'commander';
import type { ScheduleOpts } from './actions/schedule.ts';
import { action, parseNonNegativeInt, parsePort, withCommonOptions } from './common.ts';

export function scheduleCommand(): Command {
  return withCommonOptions(new Command('schedule'))
    .description(
      'run sync on a schedule (Asia/Shanghai): yesterday plus the look-back window; SIGINT/SIGTERM stop it with exit 0 between runs, 130 when they cut a run short',
    )
    .option('--cron <expr>', 'cron expression, Asia/Shanghai time (GEO_SCHEDULE; default "30 4 * * *")')
    .option(
      '--lookback-days <n>',
      'days before yesterday re-read every run (GEO_LOOKBACK_DAYS; default 3)',
      parseNonNegativeInt,
    )
    .option('--run-now', 'also run once at start', false)
    .option(
      '--metrics-port <n>',
      'serve Prometheus metrics at http://HOST:N/metrics (0: any free port, logged; one it cannot listen on: exit 2)',
      parsePort,
    )
    .option('--metrics-host <addr>', 'address the metrics server listens on', '0.0.0.0')
    .option('--check', "run the data tests (geo-sync check) over the run's days after each run", false)
    .action(
      action(async (opts: ScheduleOpts) => (await import('./actions/schedule.ts')).schedule(opts), {
        ownStopCode: true,
      }),
    );
}
