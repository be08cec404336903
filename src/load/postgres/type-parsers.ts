/**
 * How pg turns PostgreSQL text into JS values for this warehouse (per pool, not pg's global
 * registry): BIGINT as number, DATE as its `YYYY-MM-DD` text, TIMESTAMPTZ as an ISO instant in
 * Asia/Shanghai; NUMERIC stays exact text and JSON/JSONB are parsed (pg's defaults).
 */
import pg from 'pg';
import { bigintToNumber, shanghaiIso } from '../values.ts';

const OID = { INT8: 20, DATE: 1082, TIMESTAMP: 1114, TIMESTAMPTZ: 1184 } as const;

const TIMESTAMPTZ_TEXT =
  /^(\d{4,})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?( BC)?$/;

/**
 * `2026-11-21 00:00:00.5+00` (any session TimeZone) -> `2026-11-21T08:00:00.500+08:00`. A year
 * `BC` is the year before year 1 (1 BC is year 0): an instant early on 0001-01-01 in Shanghai is
 * in 1 BC in UTC.
 */
export function parseTimestamptz(text: string): string {
  const m = TIMESTAMPTZ_TEXT.exec(text);
  if (!m) return text; // infinity, -infinity: left as PostgreSQL wrote them
  const n = (i: number) => Number(m[i] ?? 0);
  const fraction = (m[7] ?? '').padEnd(3, '0').slice(0, 3);
  const local = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0..99 as 1900..1999.
  local.setUTCFullYear(m[12] ? 1 - n(1) : n(1), n(2) - 1, n(3));
  local.setUTCHours(n(4), n(5), n(6), Number(fraction));
  const offsetMs = (m[8] === '-' ? -1 : 1) * ((n(9) * 60 + n(10)) * 60 + n(11)) * 1000;
  return shanghaiIso(local.getTime() - offsetMs);
}

function parseInt8(text: string): number | string {
  return bigintToNumber(BigInt(text));
}

const keepText = (text: string): string => text;

export const warehouseTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    switch (oid) {
      case OID.INT8:
        return parseInt8;
      case OID.DATE:
      case OID.TIMESTAMP:
        return keepText;
      case OID.TIMESTAMPTZ:
        return parseTimestamptz;
      default:
        return pg.types.getTypeParser(oid, format ?? 'text');
    }
  }) as pg.CustomTypesConfig['getTypeParser'],
};
