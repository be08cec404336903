/**
 * Value conventions shared by both drivers (duckdb/, postgres/), so that both read back the same
 * JS values: integers as numbers, money as exact decimal strings, days as `YYYY-MM-DD`, instants
 * as ISO 8601 strings in Asia/Shanghai (`2026-11-21T08:00:00+08:00`, the offset rows.ts writes)
 * and JSON as parsed values.
 */
import { jsonStringify } from '../json-text.ts';
import type { Json } from '../transform/rows.ts';

const SHANGHAI_OFFSET_MS = 8 * 3600_000;

/** An instant (ms since the epoch) as ISO 8601 in Asia/Shanghai: `2026-11-21T08:00:00+08:00`. */
export function shanghaiIso(epochMs: number): string {
  const s = new Date(epochMs + SHANGHAI_OFFSET_MS).toISOString();
  // toISOString covers years 0..9999 as `YYYY-MM-DDTHH:MM:SS.sssZ`; keep milliseconds only when set.
  const base = s.slice(0, 19);
  const ms = s.slice(19, 23);
  return `${base}${ms === '.000' ? '' : ms}+08:00`;
}

/**
 * A JSON column's text; JS null (and undefined) become SQL NULL. A value nested deeper than
 * JSON.stringify can walk (an unknown API member thousands of levels down) gets the same text.
 */
export function jsonText(value: Json | undefined): string | null {
  return value === null || value === undefined ? null : (jsonStringify(value) ?? null);
}

/**
 * A bigint read from a database as a JS number, or as its decimal text when it does not fit
 * 2^53 (never rounded silently).
 */
export function bigintToNumber(value: bigint): number | string {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
    ? Number(value)
    : value.toString();
}

/** Rows with a unique key: a later row replaces an earlier one with the same key. */
export function dedupeBy<T>(rows: readonly T[], keyOf: (row: T) => string | number): T[] {
  const byKey = new Map<string | number, T>();
  for (const row of rows) byKey.set(keyOf(row), row);
  return byKey.size === rows.length ? [...rows] : [...byKey.values()];
}

/** `${task_id}|${date}`: the key of a unit of work, as finishedUnits returns it. */
export function unitKeyOf(taskId: number, date: string): string {
  return `${taskId}|${date}`;
}
