/**
 * `geo-sync worker`: takes the jobs of distributed backfills (`backfill --distributed`) from the
 * queue in PostgreSQL (what both do: actions/worker.ts).
 */
import { Command, Option } from 'commander';
import type { WorkerOpts } from './actions/worker.ts';
import { action, parsePort, parsePositiveInt } from './common.ts';

export function workerCommand(): Command {
  // The common options, except that --concurrency here is units at once: GEO_CONCURRENCY stays
  // the total of requests in flight across all workers.
  return new Command('worker')
    .description(
      'take jobs of distributed backfills (backfill --distributed) from the queue in PostgreSQL and run them',
    )
    .option('--concurrency <n>', 'units (jobs) this worker runs at once (default 2)', parsePositiveInt)
    .option('--exit-when-idle', 'exit once no job is queued or active (0; 3 when a job it ran failed)', false)
    .option(
      '--metrics-port <n>',
      'serve Prometheus metrics (jobs by outcome) at http://HOST:N/metrics (0: any free port, logged; one it cannot listen on: exit 2)',
      parsePort,
    )
    .option('--metrics-host <addr>', 'address the metrics server listens on', '0.0.0.0')
    .option('--config <file>', 'JSON config file (default: GEO_CONFIG)')
    .option('--base-url <url>', 'API base URL (GEO_BASE_URL)')
    .option('--warehouse <target>', 'postgres:// URL (GEO_WAREHOUSE): the warehouse and the job queue')
    .option(
      '--requests-per-second <n>',
      'request starts per second, total across live workers (GEO_REQUESTS_PER_SECOND)',
      parsePositiveInt,
    )
    .addOption(new Option('--log-level <level>', 'log level (GEO_LOG_LEVEL)'))
    .addOption(
      new Option('--log-format <format>', 'log format (GEO_LOG_FORMAT)').choices(['auto', 'json', 'pretty']),
    )
    .action(action(async (opts: WorkerOpts) => (await import('./actions/worker.ts')).worker(opts)));
}
