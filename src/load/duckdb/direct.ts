/**
 * The direct bulk path, DuckDB (plain inserts: the execution batch's fast path): the Appender
 * appends typed data chunks straight into the keyed geo table, in the table's own column types,
 * so each row is written once. The Appender checks the primary key, NOT NULL and CHECK
 * constraints as INSERT does; a duplicate key fails the flush (driver.ts isDuplicateKey).
 *
 * Every value is converted in JS exactly as the staging path's `CAST(text AS type)` would
 * (staging.ts), or not at all: when a value is not in the one form converted here, the caller
 * takes the staging path for the whole load, so DuckDB's own CAST decides (and fails) as before.
 * A number its column's type cannot hold (NaN or a fraction into BIGINT, past INTEGER's range)
 * fails the load as a ValueConversionError naming the table and column (errors.ts).
 *
 * - timestamptz: `YYYY-MM-DD[T ]HH:MM:SS[.fraction](Z|±HH[[:]MM])`, any number of fraction
 *   digits; like the CAST, digits after the sixth are dropped (truncated, never rounded). No
 *   zone, other spellings, year 0 or out-of-range fields: staging path.
 * - date: `YYYY-MM-DD` of a real calendar day, years 1..9999.
 * - money: `[-]digits[.digits]` into the column's DECIMAL(w, s): digits after the scale round
 *   half away from zero, as the CAST does; a value out of the column's range, or another
 *   spelling (`1e3`, `+1`, `.5`, spaces): staging path.
 * - json: the text of ../values.ts jsonText, unchanged (the CAST keeps the text as is and only
 *   validates it; JSON.stringify's output is valid JSON except a lone surrogate, `\ud800`, which
 *   the CAST rejects: such text takes the staging path).
 * - synced_at, which rows do not carry: the value the caller gives (the transaction's now(), what
 *   the column's DEFAULT now() gives an INSERT).
 */
import {
  DuckDBDataChunk,
  DuckDBDecimalType,
  DuckDBTypeId,
  dateValue,
  decimalValue,
  timestampTZValue,
  type DuckDBAppender,
  type DuckDBConnection,
  type DuckDBTimestampTZValue,
  type DuckDBType,
  type DuckDBValue,
} from './node-api.ts';
import type { Json } from '../../transform/rows.ts';
import type { ColumnKind, TableSpec } from '../tables.ts';
import { jsonText } from '../values.ts';
import { convertingColumn } from './errors.ts';

const CHUNK_ROWS = 2048;

/** Converts one non-null value of a column; `undefined`: not converted (staging path). */
type Convert = (value: unknown) => DuckDBValue | undefined;

// ---- values ------------------------------------------------------------------------------------

/** Days since 1970-01-01 of a proleptic Gregorian day (H. Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days since the epoch of y-m-d, or undefined when it is not a day of years 1..9999. */
function dayNumber(y: number, m: number, d: number): number | undefined {
  if (y < 1 || m < 1 || m > 12 || d < 1) return undefined;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  if (d > DAYS_IN_MONTH[m - 1]! + (m === 2 && leap ? 1 : 0)) return undefined;
  return daysFromCivil(y, m, d);
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `YYYY-MM-DD` -> days since the epoch (CAST AS DATE); undefined when not in that form. */
export function parseDate(text: string): number | undefined {
  const m = DATE.exec(text);
  return m ? dayNumber(Number(m[1]), Number(m[2]), Number(m[3])) : undefined;
}

const TIMESTAMPTZ =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:(Z)|([+-])(\d{2})(?::?(\d{2}))?)$/;

/**
 * An ISO instant with a zone -> microseconds since the epoch, as CAST(text AS TIMESTAMPTZ):
 * fraction digits past the sixth truncated. Undefined when not in that form.
 */
export function parseTimestamptz(text: string): bigint | undefined {
  const m = TIMESTAMPTZ.exec(text);
  if (!m) return undefined;
  const day = dayNumber(Number(m[1]), Number(m[2]), Number(m[3]));
  const [h, mi, s] = [Number(m[4]), Number(m[5]), Number(m[6])];
  const [offH, offM] = [Number(m[10] ?? 0), Number(m[11] ?? 0)];
  if (day === undefined || h > 23 || mi > 59 || s > 59 || offH > 23 || offM > 59) return undefined;
  const offset = m[8] ? 0 : (m[9] === '-' ? -1 : 1) * (offH * 3600 + offM * 60);
  const seconds = day * 86_400 + h * 3600 + mi * 60 + s - offset;
  const micros = Number((m[7] ?? '').slice(0, 6).padEnd(6, '0'));
  return BigInt(seconds) * 1_000_000n + BigInt(micros);
}

const MONEY = /^(-?)(\d+)(?:\.(\d+))?$/;

/**
 * `[-]digits[.digits]` -> the unscaled value of DECIMAL(width, scale), as the CAST: digits past
 * the scale round half away from zero. Undefined when not in that form or out of range.
 */
export function parseDecimal(text: string, width: number, scale: number): bigint | undefined {
  const m = MONEY.exec(text);
  if (!m) return undefined;
  const fraction = m[3] ?? '';
  let unscaled = BigInt(m[2]! + fraction.slice(0, scale).padEnd(scale, '0'));
  if (fraction.length > scale && fraction.charCodeAt(scale) >= 53 /* '5' */) unscaled += 1n;
  if (unscaled >= 10n ** BigInt(width)) return undefined;
  return m[1] === '-' ? -unscaled : unscaled;
}

/** A lone surrogate's escape, as JSON.stringify writes it (and the JSON CAST rejects). */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** The converter of a column of `kind` into the table's column type, or undefined if none fits. */
function converter(kind: ColumnKind, type: DuckDBType): Convert | undefined {
  const id = type.typeId;
  switch (kind) {
    case 'bigint':
      return id === DuckDBTypeId.BIGINT ? (v) => BigInt(v as number) : undefined;
    case 'integer':
      return id === DuckDBTypeId.INTEGER ? (v) => v as number : undefined;
    case 'double':
      return id === DuckDBTypeId.DOUBLE ? (v) => v as number : undefined;
    case 'boolean':
      return id === DuckDBTypeId.BOOLEAN ? (v) => v as boolean : undefined;
    case 'text':
      return id === DuckDBTypeId.VARCHAR && type.alias === undefined ? (v) => String(v) : undefined;
    case 'date':
      return id === DuckDBTypeId.DATE
        ? (v) => {
            const days = parseDate(String(v));
            return days === undefined ? undefined : dateValue(days);
          }
        : undefined;
    case 'timestamptz':
      return id === DuckDBTypeId.TIMESTAMP_TZ
        ? (v) => {
            const micros = parseTimestamptz(String(v));
            return micros === undefined ? undefined : timestampTZValue(micros);
          }
        : undefined;
    case 'money': {
      if (!(type instanceof DuckDBDecimalType)) return undefined;
      const { width, scale } = type;
      return (v) => {
        const unscaled = parseDecimal(String(v), width, scale);
        return unscaled === undefined ? undefined : decimalValue(unscaled, width, scale);
      };
    }
    case 'json':
      return id === DuckDBTypeId.VARCHAR && type.alias === 'JSON'
        ? (v) => {
            const text = jsonText(v as Json);
            return text !== null && SURROGATE_ESCAPE.test(text) ? undefined : text;
          }
        : undefined;
  }
}

// ---- loading -----------------------------------------------------------------------------------

/** How a table column is filled: from a row field, or with the load's synced_at. */
type Source = { field: string; convert: Convert } | { synced: true };

/**
 * How to fill each column of `tableColumns` (the geo table's columns in table order, as the
 * Appender takes them) from rows of `spec`; undefined when some column cannot be filled here (a
 * column the spec lacks, other than synced_at; a type the kind does not map to).
 */
function sources<R>(
  spec: TableSpec<R>,
  tableColumns: readonly string[],
  appender: DuckDBAppender,
): Source[] | undefined {
  if (appender.columnCount !== tableColumns.length) return undefined;
  const out: Source[] = [];
  for (const [i, name] of tableColumns.entries()) {
    const column = spec.columns.find((c) => c.name === name);
    const type = appender.columnType(i);
    if (column) {
      const convert = converter(column.kind, type);
      if (!convert) return undefined;
      out.push({ field: column.name, convert });
    } else if (name === 'synced_at' && spec.synced && type.typeId === DuckDBTypeId.TIMESTAMP_TZ) {
      out.push({ synced: true });
    } else {
      return undefined;
    }
  }
  return out.length === spec.columns.length + (spec.synced ? 1 : 0) ? out : undefined;
}

/**
 * The columns of a chunk of rows of `table`, converted; undefined when some value is not
 * converted. A value the conversion throws on (BigInt(NaN)) fails as a ValueConversionError.
 */
function chunkColumns(
  table: string,
  rows: readonly Record<string, unknown>[],
  from: readonly Source[],
  syncedAt: DuckDBTimestampTZValue,
): DuckDBValue[][] | undefined {
  const columns: DuckDBValue[][] = [];
  for (const source of from) {
    const values: DuckDBValue[] = new Array<DuckDBValue>(rows.length);
    if ('synced' in source) {
      values.fill(syncedAt);
    } else {
      const whole = convertingColumn(table, source.field, () => {
        for (let i = 0; i < rows.length; i++) {
          const v = rows[i]![source.field];
          if (v === null || v === undefined) {
            values[i] = null;
          } else {
            const converted = source.convert(v);
            if (converted === undefined) return false;
            values[i] = converted;
          }
        }
        return true;
      });
      if (!whole) return undefined;
    }
    columns.push(values);
  }
  return columns;
}

/**
 * chunk.setColumns, a column at a time, so that a value the chunk's vector refuses (a number out
 * of INTEGER's range) fails as a ValueConversionError naming `table` and its column (`names`).
 */
export function setChunkColumns(
  chunk: DuckDBDataChunk,
  table: string,
  names: readonly string[],
  columns: readonly (readonly DuckDBValue[])[],
): void {
  if (columns.length !== chunk.columnCount)
    throw new Error(`${columns.length} columns for a chunk of ${chunk.columnCount}`);
  columns.forEach((values, i) =>
    convertingColumn(table, names[i] ?? `#${i}`, () => chunk.setColumnValues(i, values)),
  );
}

/**
 * Appends `rows` to geo.<spec.table> inside the connection's current transaction, flushed before
 * it returns. Returns false, having appended nothing, when some column or value is not converted
 * here (the caller then takes the staging path). A constraint violation throws (and leaves the
 * transaction aborted: the caller rolls back).
 *
 * `tableColumns`: the table's column names in table order; `syncedAt`: the synced_at value.
 */
export async function appendDirect<R>(
  connection: DuckDBConnection,
  spec: TableSpec<R>,
  rows: readonly R[],
  tableColumns: readonly string[],
  syncedAt: () => Promise<DuckDBTimestampTZValue>,
): Promise<boolean> {
  if (rows.length === 0) return true;
  const appender = await connection.createAppender(spec.table, 'geo');
  let flushed = false;
  try {
    const from = sources(spec, tableColumns, appender);
    if (!from) return false;
    const types = from.map((_, i) => appender.columnType(i));
    const synced = spec.synced ? await syncedAt() : timestampTZValue(0n);
    // Convert every value before appending any, so that a fallback appends nothing.
    const chunks: DuckDBDataChunk[] = [];
    for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
      const part = rows.slice(start, start + CHUNK_ROWS) as readonly Record<string, unknown>[];
      const columns = chunkColumns(spec.table, part, from, synced);
      if (!columns) return false;
      const chunk = DuckDBDataChunk.create(types, part.length);
      setChunkColumns(chunk, spec.table, tableColumns, columns);
      chunks.push(chunk);
    }
    for (const chunk of chunks) appender.appendDataChunk(chunk);
    appender.flushSync();
    flushed = true;
    return true;
  } finally {
    closeAppender(appender, flushed);
  }
}

/**
 * Closes an Appender. After a failed append or flush (`flushed` false), the rows it still holds
 * are dropped first: closing would try them again and fail ("transaction is aborted"), and
 * whatever is left is flushed once more when the Appender is garbage-collected, which aborts
 * whatever transaction the connection is in by then. That error is not thrown (the first one is).
 */
export function closeAppender(appender: DuckDBAppender, flushed: boolean): void {
  if (flushed) {
    appender.closeSync();
    return;
  }
  try {
    appender.clear();
    appender.closeSync();
  } catch {
    // The failure that brought us here is the one to report.
  }
}
