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
} from './node-api.ts';
import { createRequire } from 'node:module';
import { TextDecoder } from 'node:util';
import type { Json } from '../../transform/rows.ts';
import { bigintToNumber, shanghaiIso } from '../values.ts';

/**
 * @duckdb/node-api reads every VARCHAR through one shared `new TextDecoder()`, which drops a
 * leading U+FEFF (the decoder's byte-order-mark handling): a text DuckDB stores as "\uFEFFabc"
 * (length 4) was read back as "abc", so `verify` saw a difference that is not there. The shared
 * decoder is replaced, once, by one that keeps it. The module is @duckdb/node-api's own (pinned
 * in package.json); if a version moves it, this throws when the driver loads, never silently.
 */
const accessors = createRequire(import.meta.url)('@duckdb/node-api/lib/vectors/dataAccessors.js') as {
  textDecoder: TextDecoder;
};
if (!(accessors.textDecoder instanceof TextDecoder))
  throw new Error(
    '@duckdb/node-api: its text decoder moved (lib/vectors/dataAccessors.js): see load/duckdb/values.ts',
  );
accessors.textDecoder = new TextDecoder('utf-8', { ignoreBOM: true });

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
