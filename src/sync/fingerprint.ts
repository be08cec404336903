/**
 * Change detection (issue 21): the fingerprint of a task/results item is the sha256 of its
 * canonical JSON (object members sorted by name at every depth, arrays in order), every member
 * included, unknown ones too (the schemas keep them). Two items that differ in any member differ
 * in fingerprint; the same item in another member order does not.
 */
import { createHash } from 'node:crypto';

/** JSON text with object keys sorted at every depth; `undefined` members dropped as JSON does. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value))
    return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  const members = Object.keys(value)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${members.join(',')}}`;
}

export function fingerprintOf(item: unknown): string {
  return createHash('sha256').update(canonicalJson(item)).digest('hex');
}
