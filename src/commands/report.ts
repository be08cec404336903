/** `geo-sync report`: an offline HTML report with charts, from either warehouse. */
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { Command } from 'commander';
import { openMigratedWarehouse } from '../app.ts';
import {
  action,
  collectIds,
  configFrom,
  loggerFor,
  parseDay,
  withCommonOptions,
  type CommonOpts,
  checkDayOrder,
} from './common.ts';

interface ReportOpts extends CommonOpts {
  out: string;
  from?: string;
  to?: string;
  customer?: number[];
}

/**
 * Writes `text` beside `path` and renames it into place: whoever opens the report (a browser, a
 * mail, a shared drive's sync) sees the previous file or the new one whole, never a truncated
 * one, and a write that fails (disk full, killed) leaves the previous file as it was.
 */
async function writeAside(path: string, text: string): Promise<void> {
  const aside = join(
    dirname(path),
    `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  );
  try {
    await writeFile(aside, text);
    await rename(aside, path);
  } catch (e) {
    await rm(aside, { force: true });
    throw e;
  }
}

export function reportCommand(): Command {
  return withCommonOptions(new Command('report'))
    .description(
      'write one self-contained HTML file (opens offline) with charts of ranks, brand share, cited domains and missing answers',
    )
    .requiredOption('--out <file>', 'the HTML file to write, e.g. report.html')
    .option('--from <day>', 'first day (YYYY-MM-DD)', parseDay)
    .option('--to <day>', 'last day (YYYY-MM-DD)', parseDay)
    .option('--customer <id>', 'page project ID (customer_id); repeatable or comma-separated', collectIds)
    .action(
      action(async (opts: ReportOpts) => {
        checkDayOrder(opts.from, opts.to);
        const config = configFrom(opts);
        const warehouse = await openMigratedWarehouse(config, loggerFor(config));
        let html: string;
        try {
          // Loaded here, not at start-up: vega is large and only this command needs it.
          const { buildReport } = await import('../report/index.ts');
          html = await buildReport(warehouse, { from: opts.from, to: opts.to, customers: opts.customer });
        } finally {
          await warehouse.close();
        }
        const out = resolve(opts.out);
        await mkdir(dirname(out), { recursive: true });
        await writeAside(out, html);
        process.stdout.write(`report written to ${out} (${Math.round(html.length / 1024)} KB)\n`);
      }),
    );
}
