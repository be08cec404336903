/** `geo-sync export`: the warehouse as Parquet or CSV files, hive-partitioned by day. */
import { settingName } from '../../app-warehouse.ts';
import { UsageError } from '../../errors.ts';
import type { Config } from '../../config.ts';
import { exportWarehouse, parseTables, type ExportFormat } from '../../export/index.ts';
import { parseWarehouseTarget } from '../../load/target.ts';
import { connectFailure } from '../../load/postgres/pool.ts';
import { UnreachableError } from '../../unreachable.ts';
import { type CommonOpts, checkDayOrder, stopSignal } from '../common.ts';
import { configFrom } from './common.ts';

export interface ExportOpts extends CommonOpts {
  format: ExportFormat;
  out: string;
  from?: string;
  to?: string;
  tables?: string;
  csvSafe: boolean;
}

/**
 * A PostgreSQL warehouse the export could not reach, named by its setting as every command names
 * it (UnreachableError); any other error as it is.
 */
function namedUnreachable(e: unknown, config: Config): unknown {
  const target = parseWarehouseTarget(config.warehouse);
  const reason = target.dialect === 'postgres' ? connectFailure(e, target.url) : undefined;
  if (!reason || e instanceof UnreachableError) return e;
  return new UnreachableError(
    settingName(config, 'warehouse'),
    `PostgreSQL at ${target.description}`,
    reason,
    {
      cause: e,
    },
  );
}

/** `export`. */
export async function exportTables(opts: ExportOpts): Promise<void> {
  checkDayOrder(opts.from, opts.to);
  if (opts.csvSafe && opts.format !== 'csv')
    throw new UsageError(
      `--csv-safe applies to --format csv only (a Parquet file keeps every value as it is); drop it or use --format csv`,
    );
  let tables;
  try {
    tables = parseTables(opts.tables);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const config = configFrom(opts);
  const written = await exportWarehouse({
    signal: stopSignal(),
    warehouse: config.warehouse,
    out: opts.out,
    format: opts.format,
    tables,
    range: { from: opts.from, to: opts.to },
    csvSafe: opts.csvSafe,
    duckdb: config.duckdb,
    onNote: (message) => process.stderr.write(`note: ${message}\n`),
  }).catch((e: unknown) => {
    throw namedUnreachable(e, config);
  });
  for (const w of written) {
    const days = w.days
      ? `, ${w.days.length} day(s)${w.days.length ? ` ${w.days[0]}..${w.days.at(-1)}` : ''}`
      : '';
    process.stdout.write(`${w.table}: ${w.rows} rows${days}\n`);
  }
  process.stdout.write(`exported ${written.length} table(s) as ${opts.format} to ${opts.out}\n`);
  // The values are written exactly as stored, which a data lake needs; a spreadsheet may run
  // some of them (README, "Export to Parquet or CSV").
  if (opts.format === 'csv' && !opts.csvSafe)
    process.stderr.write(
      'note: cells are written as the API gave them; a spreadsheet runs a cell beginning with =, +, - or @ as a formula: export with --csv-safe for files meant for a spreadsheet\n',
    );
}
