/**
 * TEMP staging tables for COPY + upsert (a bulk load in `upsert` mode): `(LIKE geo.<table>
 * INCLUDING DEFAULTS) ON COMMIT DELETE ROWS`, so they have the target's column types, no
 * indexes, and are empty again after every transaction (commit or rollback).
 *
 * Made sure of inside the transaction that loads them (one DO block, no round trip when they
 * exist): behind a connection pooler in transaction mode a table made before BEGIN may be on
 * another server connection than the transaction. They stay on the server connection they were
 * made on, empty, for the next transaction there. Their name carries a hash of the columns this
 * version loads, so one left by an older version (on a pooled server connection that outlived
 * it) is never loaded with columns it lacks.
 */
import { createHash } from 'node:crypto';

/** What names a staging table: the table, and the columns this version loads into it. */
interface StagedSpec {
  readonly table: string;
  readonly columns: readonly { readonly name: string; readonly kind: string }[];
}

const names = new WeakMap<object, string>();

/** The staging table of a table description (connection-local): pg_temp.stage_<table>_<hash>. */
export function stagingTable(spec: StagedSpec): string {
  let name = names.get(spec);
  if (!name) {
    const shape = spec.columns.map((c) => `${c.name}:${c.kind}`).join(',');
    name = `stage_${spec.table}_${createHash('sha256').update(shape).digest('hex').slice(0, 8)}`;
    names.set(spec, name);
  }
  return `pg_temp.${name}`;
}

/** Creates the staging table of `spec` on this connection when it has none (in a transaction). */
export function ensureStagingSql(spec: StagedSpec): string {
  const table = stagingTable(spec);
  const bare = table.slice('pg_temp.'.length);
  return `DO $$ BEGIN
  IF to_regclass('${table}') IS NULL THEN
    CREATE TEMP TABLE ${bare} (LIKE geo.${spec.table} INCLUDING DEFAULTS) ON COMMIT DELETE ROWS;
  END IF;
END $$`;
}
