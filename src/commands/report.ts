/** `geo-sync report`: an offline HTML report with charts, from either warehouse. */
import { Command } from 'commander';
import type { ReportOpts } from './actions/report.ts';
import { action, collectIds, parseDay, withCommonOptions } from './common.ts';

export function reportCommand(): Command {
  return withCommonOptions(new Command('report'))
    .description(
      'write one self-contained HTML file (opens offline) with charts of ranks, brand share, cited domains and missing answers',
    )
    .requiredOption(
      '--out <file>',
      'the HTML file to write, e.g. report.html (written beside it and renamed: a failed or stopped report leaves the previous file)',
    )
    .option('--from <day>', 'first day (YYYY-MM-DD)', parseDay)
    .option('--to <day>', 'last day (YYYY-MM-DD)', parseDay)
    .option('--customer <id>', 'page project ID (customer_id); repeatable or comma-separated', collectIds)
    .action(action(async (opts: ReportOpts) => (await import('./actions/report.ts')).report(opts)));
}
