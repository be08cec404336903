/**
 * `geo-sync demo`: the main job for a new user, with nothing to set up. Starts the built-in
 * simulator in-process, syncs its last few days into a DuckDB file, and prints rows per table,
 * the top brands by average rank per platform and the most cited domains.
 */
import { createApi, openMigratedWarehouse, runLocked } from '../../app.ts';
import { loadConfig } from '../../config.ts';
import { removeDuckDBWarehouse } from '../../load/index.ts';
import { registerSecret } from '../../log.ts';
import { analystReport } from '../../reports.ts';
import { startSimulator } from '../../simulator/index.ts';
import { exitCodeOf } from '../../sync/exit-codes.ts';
import { createProgressReporter } from '../../sync/progress.ts';
import { formatSummary } from '../../sync/summary.ts';
import { daysBetween, addDays, shanghaiYesterday } from '../../transform/time.ts';
import { stopSignal } from '../common.ts';
import { loggerFor } from './common.ts';

export interface DemoOpts {
  days: number;
  warehouse: string;
  seed: number;
  executionsPerDay: number;
  keep: boolean;
}

/** `demo`. */
export async function demo(opts: DemoOpts): Promise<number> {
  const apiKey = 'demo-key';
  registerSecret(apiKey);
  const sim = await startSimulator({
    seed: opts.seed,
    days: opts.days + 1,
    apiKeys: [apiKey],
    executionsPerDay: opts.executionsPerDay,
  });
  // The simulator is local: no need for the polite defaults meant for the real API.
  const config = loadConfig({
    env: { ...process.env, GEO_API_KEY: undefined, GEO_EMAIL: undefined, GEO_PASSWORD: undefined },
    overrides: {
      baseUrl: sim.url,
      apiKey,
      warehouse: opts.warehouse,
      concurrency: 16,
      requestsPerSecond: 5000,
      // The demo shows its summary and report; per-unit lines would bury them.
      logLevel: process.env.GEO_LOG_LEVEL || 'warn',
    },
  });
  // Start fresh: a DuckDB demo warehouse is removed (a PostgreSQL one is kept as it is).
  if (!opts.keep) await removeDuckDBWarehouse(config.warehouse);
  const logger = loggerFor(config);
  const signal = stopSignal(logger);
  const api = createApi(config, logger, { signal });
  const warehouse = await openMigratedWarehouse(config, logger, { signal, run: true });
  const yesterday = shanghaiYesterday();
  const dates = daysBetween(addDays(yesterday, -(opts.days - 1)), yesterday);
  process.stdout.write(
    `geo-sync demo: simulator at ${sim.url}, syncing ${dates[0]} .. ${yesterday} into ${warehouse.description}\n`,
  );
  const progress = createProgressReporter({ tty: Boolean(process.stderr.isTTY), logger });
  try {
    const summary = await runLocked(api, warehouse, config, logger, {
      kind: 'demo',
      dates,
      customers: [],
      force: true,
      args: { days: opts.days, seed: opts.seed, executionsPerDay: opts.executionsPerDay },
      waitForLockMs: 0,
      signal,
      onProgress: (p) => progress.update(p),
    });
    progress.stop();
    process.stdout.write(formatSummary(summary) + '\n\n');
    process.stdout.write((await analystReport(warehouse)) + '\n');
    process.stdout.write(
      `\nQuery it yourself: the views geo.brand_visibility_daily, geo.brand_share_of_voice_daily, geo.citations_daily, geo.question_rank_daily (README, docs/data-dictionary.md) in ${warehouse.description}\n`,
    );
    return exitCodeOf(summary.status);
  } finally {
    progress.stop();
    await warehouse.close();
    await api.close();
    await sim.close();
  }
}
