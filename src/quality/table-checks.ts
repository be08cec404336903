/**
 * The two checks that are one query per table, built from the table description (load/tables.ts)
 * instead of written out by hand, so a table or a key the schema gains is checked without
 * anyone remembering to: keys_unique over every table the dialect has, by its primary key (an aggregate's grain), and
 * children_have_execution over every table keyed by an execution's prompt_task_id. Portable SQL
 * (both warehouses); each ends with ORDER BY column positions, as sql/checks/*.sql do.
 */
import { EXECUTION_CHILD_TABLES, GEO_TABLES } from '../load/tables.ts';
import type { Dialect } from '../load/warehouse.ts';

/** Tables whose rows belong to one execution: its children, and its change-detection fingerprint. */
const OF_AN_EXECUTION = [...EXECUTION_CHILD_TABLES, 'execution_fingerprints'];

/** No two rows of a table share its key: one row per duplicated key (table_name, key, copies). */
export function keysUniqueSql(dialect: Dialect): string {
  const parts = GEO_TABLES.filter((t) => t.dialects.includes(dialect)).map((t) => {
    // NULL spelled out: an aggregate's grain may hold a NULL customer_id.
    const key = t.unique.map((c) => `COALESCE(CAST(${c} AS VARCHAR), 'NULL')`).join(` || '/' || `);
    return (
      `SELECT '${t.table}' AS table_name, ${key} AS key, count(*) AS copies ` +
      `FROM geo.${t.table} GROUP BY ${t.unique.join(', ')} HAVING count(*) > 1`
    );
  });
  return `${parts.join('\nUNION ALL\n')}\nORDER BY 1, 2`;
}

/** No row of an execution's without its execution: one row per orphaned prompt_task_id and table. */
export function childrenHaveExecutionSql(): string {
  const parts = OF_AN_EXECUTION.map(
    (table) =>
      `SELECT '${table}' AS table_name, c.prompt_task_id, count(*) AS orphan_rows FROM geo.${table} c ` +
      `WHERE NOT EXISTS (SELECT 1 FROM geo.prompt_executions e WHERE e.prompt_task_id = c.prompt_task_id) ` +
      `GROUP BY c.prompt_task_id`,
  );
  return `${parts.join('\nUNION ALL\n')}\nORDER BY 1, 2`;
}
