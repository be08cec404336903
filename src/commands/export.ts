/** `geo-sync export`: the warehouse as Parquet or CSV files, hive-partitioned by day. */
import { Command, Option } from 'commander';
import type { ExportOpts } from './actions/export.ts';
import { action, parseDay, withCommonOptions } from './common.ts';

export function exportCommand(): Command {
  return withCommonOptions(new Command('export'))
    .description(
      'write the warehouse tables as Parquet or CSV files, one folder per table; tables with a day are hive-partitioned by day (day=YYYY-MM-DD)',
    )
    .addOption(
      new Option('--format <format>', 'file format').choices(['parquet', 'csv']).makeOptionMandatory(),
    )
    .requiredOption(
      '--out <dir>',
      'output folder (created when missing); written through a scratch folder, so a failed or stopped export leaves it as it was',
    )
    .option('--from <day>', 'first day of the day-partitioned tables (YYYY-MM-DD)', parseDay)
    .option('--to <day>', 'last day of the day-partitioned tables (YYYY-MM-DD)', parseDay)
    .option('--tables <list>', 'comma-separated tables (default: every data table)')
    .option(
      '--csv-safe',
      "CSV for spreadsheets: a text cell beginning with =, +, -, @, a tab or a carriage return gets a leading ' so it is not run as a formula (the values then differ from the warehouse's)",
      false,
    )
    .action(action(async (opts: ExportOpts) => (await import('./actions/export.ts')).exportTables(opts)));
}
