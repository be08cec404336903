/** Where an export reads from: one implementation per warehouse dialect. */
import type { DataTable } from '../load/warehouse.ts';
import type { DayRange, ExportFormat } from './tables.ts';

export interface ExportSource {
  /**
   * Writes the table's rows in the range into `dir` (partitions or one file); returns the row
   * count. `csvSafe`: text cells that a spreadsheet would run as a formula get a leading `'`.
   */
  writeTable(
    table: DataTable,
    range: DayRange,
    dir: string,
    format: ExportFormat,
    csvSafe?: boolean,
  ): Promise<number>;
  close(): Promise<void>;
}
