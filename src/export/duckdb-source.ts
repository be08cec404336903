/**
 * Export from a DuckDB warehouse: the file is attached read-only to the export engine and each
 * table goes out in one COPY, partitioned by DuckDB itself. Nothing passes through JavaScript.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { quotedString } from '@duckdb/node-api';
import { lockedError } from '../load/duckdb/database.ts';
import type { DataTable } from '../load/warehouse.ts';
import { copySql, csvSafeSelect, extension, type Engine } from './engine.ts';
import type { ExportSource } from './source.ts';
import { DAY_RULES, exportSelect, type DayRange, type ExportFormat } from './tables.ts';

const ALIAS = 'src';

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
      const partitioned = DAY_RULES[table] !== null;
      const { sql, params } = exportSelect(table, range, {
        q: (t) => `${ALIAS}.geo.${t}`,
        shanghaiDay: (c) => `CAST(timezone('Asia/Shanghai', ${c}) AS DATE)`,
      });
      await mkdir(dir, { recursive: true });
      const target = partitioned ? dir : join(dir, `data_0.${extension(format)}`);
      const select = csvSafe ? await csvSafeSelect(engine, sql, params) : sql;
      return engine.run(copySql(select, target, format, partitioned), params);
    },
    async close() {
      await engine.run(`DETACH ${ALIAS}`);
    },
  };
}
