/** `geo-sync report`: an offline HTML report with charts, from either warehouse. */
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { type CommonOpts, checkDayOrder, stopSignal } from '../common.ts';
import { configFrom, loggerFor, openStoppableWarehouse } from './common.ts';

export interface ReportOpts extends CommonOpts {
  out: string;
  from?: string;
  to?: string;
  customer?: number[];
}

/**
 * Writes `text` beside `path` and renames it into place: whoever opens the report (a browser, a
 * mail, a shared drive's sync) sees the previous file or the new one whole, never a truncated
 * one, and a write that fails (disk full, killed) leaves the previous file as it was. Stopped
 * (`signal`) before the rename, it removes what it wrote and leaves the previous file too.
 */
export async function writeAside(path: string, text: string, signal?: AbortSignal): Promise<void> {
  const aside = join(
    dirname(path),
    `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  );
  try {
    await writeFile(aside, text, signal ? { signal } : {});
    signal?.throwIfAborted();
    await rename(aside, path);
  } catch (e) {
    await rm(aside, { force: true });
    throw e;
  }
}

/** `report`. */
export async function report(opts: ReportOpts): Promise<void> {
  checkDayOrder(opts.from, opts.to);
  const config = configFrom(opts);
  const logger = loggerFor(config);
  const signal = stopSignal(logger);
  const warehouse = await openStoppableWarehouse(config, logger);
  let html: string;
  try {
    // Loaded here, not at start-up: vega is large and only this command needs it.
    const { buildReport } = await import('../../report/index.ts');
    html = await buildReport(warehouse, { from: opts.from, to: opts.to, customers: opts.customer });
  } finally {
    await warehouse.close();
  }
  const out = resolve(opts.out);
  await mkdir(dirname(out), { recursive: true });
  await writeAside(out, html, signal);
  process.stdout.write(`report written to ${out} (${Math.round(html.length / 1024)} KB)\n`);
}
