/**
 * Change detection: the fingerprint of a task/results item is the sha256 of its
 * canonical JSON (object members sorted by name at every depth, arrays in order), every member
 * included, unknown ones too (the schemas keep them). Two items that differ in any member differ
 * in fingerprint; the same item in another member order does not. How the children were read (the
 * legacy enrichments on or off) is part of it: turning one on reads every execution again, once,
 * so each gets the enrichment's columns.
 */
import { createHash } from 'node:crypto';
import { jsonText } from '../json-text.ts';

/**
 * JSON text with object keys sorted at every depth; `undefined` members dropped as JSON does.
 * Without recursion (json-text.ts): an unknown member nested thousands of levels deep is
 * fingerprinted like any other, and the text is the one the recursive form made, so fingerprints
 * stored by earlier versions still match.
 */
export function canonicalJson(value: unknown): string {
  return jsonText(value, { sortKeys: true });
}

/** What of a run's reading decides an execution's stored children besides its item. */
export interface Reading {
  legacySources: boolean;
  executionTimes: boolean;
}

export function fingerprintOf(item: unknown, reading: Reading): string {
  return createHash('sha256')
    .update(
      canonicalJson({
        item,
        reading: { legacySources: reading.legacySources, executionTimes: reading.executionTimes },
      }),
    )
    .digest('hex');
}
