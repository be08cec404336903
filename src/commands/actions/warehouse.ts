/** `geo-sync migrate` and `geo-sync runs`. */
import { warehouseOptions } from '../../app-warehouse.ts';
import { openWarehouse, parseWarehouseTarget } from '../../load/index.ts';
import { type CommonOpts, stopSignal } from '../common.ts';
import { configFrom, loggerFor, openStoppableWarehouse } from './common.ts';

/** `migrate`. */
export async function migrate(opts: CommonOpts): Promise<void> {
  const config = configFrom(opts);
  const logger = loggerFor(config);
  const signal = stopSignal(logger);
  const warehouse = await openWarehouse(config.warehouse, {
    ...warehouseOptions(config, logger),
    signal,
    interruptOn: signal,
  });
  try {
    const r = await warehouse.migrate();
    process.stdout.write(
      `${warehouse.description}: applied ${r.applied.length} migration(s)${r.applied.length ? ` (${r.applied.join(', ')})` : ''}, ${r.alreadyApplied.length} already applied\n`,
    );
    for (const note of r.notes) process.stdout.write(`${note}\n`);
    // PostgreSQL: the job queue of distributed backfills, in its own schema.
    const target = parseWarehouseTarget(config.warehouse);
    if (target.dialect === 'postgres') {
      // (Loaded here: a DuckDB warehouse has no queue.)
      const { migrateQueue, QUEUE_SCHEMA } = await import('../../distributed/queue.ts');
      await migrateQueue(target.url, config, logger);
      process.stdout.write(`job queue: schema ${QUEUE_SCHEMA} ready\n`);
    }
  } finally {
    await warehouse.close();
  }
}

export type RunsOpts = CommonOpts & { limit: number; json: boolean };

/** `runs`. */
export async function runs(opts: RunsOpts): Promise<void> {
  const config = configFrom(opts);
  const warehouse = await openStoppableWarehouse(config, loggerFor(config));
  try {
    const runs = await warehouse.listRuns(opts.limit);
    if (opts.json) {
      for (const r of runs) process.stdout.write(JSON.stringify(r) + '\n');
      return;
    }
    const header = [
      'run_id',
      'kind',
      'status',
      'started_at',
      'seconds',
      'units',
      'failed',
      'requests',
      'retries',
      '429s',
      'rejects',
    ];
    const lines = runs.map((r) => {
      const secs = r.finished_at
        ? ((Date.parse(r.finished_at) - Date.parse(r.started_at)) / 1000).toFixed(1)
        : '-';
      return [
        r.run_id,
        r.kind,
        r.status,
        r.started_at,
        secs,
        `${r.units_done}/${r.units_total}`,
        r.units_failed,
        r.requests,
        r.retries,
        r.rate_limited,
        r.rejects,
      ].map(String);
    });
    const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
    for (const row of [header, ...lines])
      process.stdout.write(
        row
          .map((c, i) => c.padEnd(widths[i]!))
          .join('  ')
          .trimEnd() + '\n',
      );
    if (runs.length === 0) process.stdout.write('no runs yet\n');
    // Distributed backfills: their jobs' states, including jobs kept as failed after their
    // retries (a job whose worker died leaves no finished run row of its own).
    const target = parseWarehouseTarget(config.warehouse);
    if (target.dialect === 'postgres') {
      const { queueExists, withClient } = await import('../../distributed/queue.ts');
      const { backfillStatusLines } = await import('../../distributed/wait.ts');
      const lines = await withClient(target.url, async (c) =>
        (await queueExists(c)) ? backfillStatusLines(c, opts.limit) : [],
      );
      if (lines.length) process.stdout.write(['distributed backfills:', ...lines].join('\n') + '\n');
    }
  } finally {
    await warehouse.close();
  }
}
