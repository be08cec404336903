/**
 * Export from a DuckDB warehouse: the file is attached read-only to the export engine, and each
 * table goes out by COPY, nothing passing through JavaScript: a day-partitioned table one COPY per
 * day into that day's folder (engine.ts says why), the others in one COPY each. A day's COPY
 * reads only that day: its executions by their date (the warehouse appends them day by day, so
 * DuckDB skips the row groups of other days), a child table joined to them (DuckDB pushes the
 * day's prompt_task_id range into the child's scan).
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { quotedString } from '../load/duckdb/node-api.ts';
import { lockedError } from '../load/duckdb/database.ts';
import type { DataTable } from '../load/warehouse.ts';
import { copySql, dayFileName, extension, guardFormulas, textColumns, type Engine } from './engine.ts';
import type { ExportSource } from './source.ts';
import {
  DAY_COLUMN,
  DAY_RULES,
  dayFolder,
  exportDaysSql,
  exportSelect,
  type DayRange,
  type ExportFormat,
} from './tables.ts';

const ALIAS = 'src';

/** The warehouse's tables and the Asia/Shanghai day of an instant, in the export engine's SQL. */
const DIALECT = {
  q: (t: string) => `${ALIAS}.geo.${t}`,
  shanghaiDay: (c: string) => `CAST(timezone('Asia/Shanghai', ${c}) AS DATE)`,
};

export async function duckdbSource(engine: Engine, path: string): Promise<ExportSource> {
  try {
    await engine.run(`ATTACH ${quotedString(path)} AS ${ALIAS} (READ_ONLY)`);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    // A sync writing the file right now: exit 4 (locked) like every command, not a failure.
    throw (
      (await lockedError(path, message, e)) ??
      new Error(`cannot open DuckDB warehouse ${path} for export: ${message.split('\n')[0]}`, { cause: e })
    );
  }
  return {
    async writeTable(table: DataTable, range: DayRange, dir: string, format: ExportFormat, csvSafe = false) {
      await mkdir(dir, { recursive: true });
      const whole = exportSelect(table, range, DIALECT);
      // --csv-safe: the text columns are the same every day; read them once.
      const text = csvSafe ? await textColumns(engine, whole.sql, whole.params) : [];
      if (DAY_RULES[table] === null) {
        const file = join(dir, `data_0.${extension(format)}`);
        return engine.run(copySql(guardFormulas(whole.sql, text), file, format, engine.rowGroupBytes));
      }
      const days = exportDaysSql(table, range, DIALECT);
      let rows = 0;
      for (const { day } of await engine.rows(days.sql, days.params))
        rows += await writeDay(engine, table, String(day), dir, format, text);
      return rows;
    },
    async close() {
      await engine.run(`DETACH ${ALIAS}`);
    },
  };
}

/** One day of a partitioned table into `dir/day=D/data_<uuid>`; a day without rows leaves no folder. */
async function writeDay(
  engine: Engine,
  table: DataTable,
  day: string,
  dir: string,
  format: ExportFormat,
  text: readonly string[],
): Promise<number> {
  const { sql, params } = exportSelect(table, { from: day, to: day }, DIALECT);
  const folder = dayFolder(dir, day);
  await mkdir(folder, { recursive: true });
  // The day is the folder's name, not a column of its files (hive partitioning, as PARTITION_BY).
  const select = guardFormulas(`SELECT * EXCLUDE (${DAY_COLUMN}) FROM (${sql})`, text);
  const rows = await engine.run(
    copySql(select, join(folder, dayFileName(format)), format, engine.rowGroupBytes),
    params,
  );
  if (rows === 0) await rm(folder, { recursive: true, force: true });
  return rows;
}
