/**
 * `geo-sync state show|reset`: what the warehouse records about units (platform task, day), and
 * forgetting checkpoints so that the next run re-reads exactly those units.
 */
import { acquireLock, lockHolder } from '../../sync/lock.ts';
import { dayStates, unitStatuses } from '../../sync/state.ts';
import { daysBetween } from '../../transform/time.ts';
import { weekRange, type CommonOpts, checkDayOrder } from '../common.ts';
import { configFrom, loggerFor, openStoppableWarehouse } from './common.ts';

interface RangeOpts extends CommonOpts {
  from?: string;
  to?: string;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return (
    rows
      .map((r) =>
        r
          .map((c, i) => c.padEnd(widths[i]!))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

export type ShowOpts = RangeOpts & { units: boolean; json: boolean };
export type ResetOpts = CommonOpts & { from: string; to: string; task?: number[] };

/** `state show`. */
export async function show(opts: ShowOpts): Promise<number | void> {
  const { from, to } = weekRange(opts);
  const config = configFrom(opts);
  const warehouse = await openStoppableWarehouse(config, loggerFor(config));
  try {
    const days = daysBetween(from, to);
    const tasks = await warehouse.platformTaskIds();
    const units = unitStatuses(days, tasks, await warehouse.unitRecords(from, to));
    const perDay = dayStates(days, units);
    if (opts.json) {
      for (const d of perDay) process.stdout.write(JSON.stringify(d) + '\n');
      return;
    }
    const total = (k: 'finished' | 'failed' | 'neverRun') => perDay.reduce((a, d) => a + d[k], 0);
    process.stdout.write(
      `units of ${tasks.length} known platform task(s), ${from} .. ${to}: ` +
        `${total('finished')} finished, ${total('failed')} failed, ${total('neverRun')} never run\n`,
    );
    process.stdout.write(
      table([
        ['date', 'finished', 'failed', 'never_run'],
        ...perDay.map((d) => [d.date, String(d.finished), String(d.failed), String(d.neverRun)]),
      ]),
    );
    const failed = units.filter((u) => u.state === 'failed');
    const listed = opts.units ? units.filter((u) => u.state !== 'finished') : failed;
    for (const u of listed.slice(0, opts.units ? undefined : 20))
      process.stdout.write(
        `${u.state} task_id=${u.task_id} date=${u.date}${u.error ? ` (run ${u.run_id}): ${u.error}` : ''}\n`,
      );
    if (!opts.units && failed.length > 20) process.stdout.write(`... ${failed.length - 20} more failed\n`);
  } finally {
    await warehouse.close();
  }
}

/** `state reset`. */
export async function reset(opts: ResetOpts): Promise<number | void> {
  checkDayOrder(opts.from, opts.to);
  const config = configFrom(opts);
  const warehouse = await openStoppableWarehouse(config, loggerFor(config));
  try {
    // Not under a running sync: it could write a checkpoint right after we delete it.
    await acquireLock(warehouse, lockHolder('state reset'), { waitMs: 0 });
    const tasks = opts.task ?? [];
    const r = await warehouse.forgetUnits(opts.from, opts.to, tasks);
    const scope = `${opts.from} .. ${opts.to}${tasks.length ? ` for task_id ${tasks.join(', ')}` : ''}`;
    if (r.checkpoints.length === 0 && r.failures === 0 && r.fingerprints === 0) {
      process.stdout.write(`nothing to forget: no checkpoint or failure recorded in ${scope}\n`);
      return;
    }
    process.stdout.write(
      `forgot ${r.checkpoints.length} checkpoint(s) and ${r.failures} failure record(s) in ${scope}, ` +
        `and the change-detection fingerprints of ${r.fingerprints} execution(s); ` +
        'the next run covering these days re-reads these units and every child of their executions ' +
        '(their rows stay until then):\n',
    );
    for (const u of r.checkpoints) process.stdout.write(`  task_id=${u.task_id} date=${u.date}\n`);
  } finally {
    await warehouse.close();
  }
}
