/**
 * DuckDB values <-> JS, with the conventions of ../values.ts: BIGINT as number, DECIMAL as
 * exact text, DATE as `YYYY-MM-DD`, TIMESTAMPTZ as an ISO instant in +08:00, JSON parsed (the
 * driver hands JSON over as VARCHAR text: readRows parses it).
 */
import {
  DuckDBTypeId,
  JSDuckDBValueConverter,
  listValue,
  type DuckDBDecimalValue,
  type DuckDBResultReader,
  type DuckDBTimestampTZValue,
  type DuckDBValue,
  type DuckDBValueConverter,
  type JS,
} from '@duckdb/node-api';
import type { Json } from '../../transform/rows.ts';
import { bigintToNumber, shanghaiIso } from '../values.ts';

export const toWarehouseValue: DuckDBValueConverter<unknown> = (value, type, self) => {
  if (value === null) return null;
  switch (type.typeId) {
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
      return bigintToNumber(value as bigint);
    case DuckDBTypeId.DECIMAL:
      return (value as DuckDBDecimalValue).toString();
    case DuckDBTypeId.DATE:
    case DuckDBTypeId.TIMESTAMP:
      return String(value);
    case DuckDBTypeId.TIMESTAMP_TZ: {
      const ts = value as DuckDBTimestampTZValue;
      return ts.isFinite ? shanghaiIso(Number(ts.micros / 1000n)) : String(ts);
    }
    default:
      // Nested values (LIST, STRUCT, ...) come back through `self`, so their items follow the same rules.
      return JSDuckDBValueConverter(value, type, self as DuckDBValueConverter<JS>);
  }
};

/**
 * A result's rows as objects of warehouse values. JSON columns are parsed here, by the result's
 * column types: the values' own types (from the data chunks) do not carry the JSON alias.
 */
export function readRows(reader: DuckDBResultReader): Record<string, unknown>[] {
  const rows = reader.convertRowObjects(toWarehouseValue) as Record<string, unknown>[];
  const names = reader.deduplicatedColumnNames();
  const json = names.filter((_, i) => reader.columnType(i).alias === 'JSON');
  if (json.length === 0) return rows;
  for (const row of rows) {
    for (const name of json) {
      const v = row[name];
      if (typeof v === 'string') row[name] = JSON.parse(v) as unknown;
    }
  }
  return rows;
}

/** A `$n` parameter of query(): arrays become LISTs, objects JSON text. */
export function toParameter(value: Json): DuckDBValue {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return listValue(value.map(toParameter));
  return JSON.stringify(value);
}
