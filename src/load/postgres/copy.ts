/**
 * COPY ... FROM STDIN (text format) through pg-copy-streams: rows are encoded here, column by
 * column from their TableSpec, and streamed in chunks. Values never touch SQL text.
 *
 * PostgreSQL text cannot hold U+0000, nor JSONB the `\u0000` escape. The core's text rule
 * (../text.ts) drops them from every row before it gets here, for both warehouses alike; they are
 * dropped here too, so a row that bypassed the core fails nothing.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type pg from 'pg';
import { jsonStringify } from '../../json-text.ts';
import type { Json } from '../../transform/rows.ts';
import { ident, type ColumnKind, type TableSpec } from '../tables.ts';

const NULL = '\\N';
const SPECIAL = /[\\\n\r\t\0]/;
const SPECIAL_ALL = /[\\\n\r\t\0]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\0': '' };
/** A JSON `\u0000` escape (an odd run of backslashes before `u0000`). */
const JSON_NUL = /(?<!\\)((?:\\\\)*)\\u0000/g;

export function escapeCopyText(s: string): string {
  return SPECIAL.test(s) ? s.replace(SPECIAL_ALL, (c) => ESCAPES[c] ?? '') : s;
}

/** JSON text PostgreSQL accepts (no `\u0000`). */
export function pgJsonText(value: Json): string {
  const s = jsonStringify(value) ?? 'null';
  return s.includes('\\u0000') ? s.replace(JSON_NUL, '$1') : s;
}

export function encodeCopyValue(kind: ColumnKind, value: unknown): string {
  if (value === null || value === undefined) return NULL;
  switch (kind) {
    case 'bigint':
    case 'integer':
    case 'double':
      return String(value);
    case 'boolean':
      return value ? 't' : 'f';
    case 'json':
      return escapeCopyText(pgJsonText(value as Json));
    default:
      return escapeCopyText(String(value));
  }
}

/** Text-format lines for `rows`, yielded in chunks of about `chunkChars` characters. */
export function* copyTextChunks<R>(
  spec: TableSpec<R>,
  rows: readonly R[],
  chunkChars = 1 << 20,
): Generator<string> {
  const cols = spec.columns;
  let buf = '';
  for (const row of rows) {
    let line = '';
    for (let i = 0; i < cols.length; i++) {
      const c = cols[i]!;
      if (i > 0) line += '\t';
      line += encodeCopyValue(c.kind, row[c.name]);
    }
    buf += line + '\n';
    if (buf.length >= chunkChars) {
      yield buf;
      buf = '';
    }
  }
  if (buf) yield buf;
}

/** COPY `rows` into `table` (a staging or a target table with the spec's columns). */
export async function copyRows<R>(
  client: pg.ClientBase,
  table: string,
  spec: TableSpec<R>,
  rows: readonly R[],
): Promise<void> {
  if (rows.length === 0) return;
  const columns = spec.columns.map((c) => ident(c.name)).join(', ');
  const stream = client.query(copyFrom(`COPY ${table} (${columns}) FROM STDIN`));
  await pipeline(Readable.from(copyTextChunks(spec, rows)), stream);
}
