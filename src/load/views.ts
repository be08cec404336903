/**
 * The views of both warehouses from one definition (sql/views.sql), so the two cannot drift:
 * its few dialect spellings are written as macros that this renders (dialect-sql.ts), and on
 * DuckDB the tables a view reads are named unqualified (see DialectSql.viewTable).
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { DIALECT_SQL, siteOf } from './dialect-sql.ts';
import type { Dialect } from './warehouse.ts';

/** Where the one definition is: `<package root>/sql/views.sql` (from src/load and dist/load). */
export const VIEWS_FILE = fileURLToPath(new URL('../../sql/views.sql', import.meta.url));

/** A macro's argument: an expression without parentheses (a column, `alias.column`). */
const ARG = String.raw`([A-Za-z_][\w.]*)`;

/** The definition rendered for `dialect`; a macro left unrendered is an error, not SQL. */
export function renderViews(template: string, dialect: Dialect): string {
  const d = DIALECT_SQL[dialect];
  const sql = template
    .replace(new RegExp(String.raw`@iso_week\(${ARG}\)`, 'g'), (_, x: string) => d.isoWeek(x))
    .replace(new RegExp(String.raw`@site\(${ARG}\)`, 'g'), (_, x: string) => siteOf(x))
    .replace(new RegExp(String.raw`@json_array_texts\(${ARG}, ${ARG}\)`, 'g'), (_, j: string, a: string) =>
      d.jsonArrayTexts(j, a),
    )
    .replace(/@double\b/g, d.double)
    // A table a view reads (never the view's own name, after CREATE OR REPLACE VIEW).
    .replace(/(?<!VIEW )\bgeo\.([a-z_]+)/g, (_, t: string) => d.viewTable(t));
  const left = /@\w+/.exec(sql.replace(/--.*$/gm, ''));
  if (left) throw new Error(`sql/views.sql: ${left[0]} is not a macro views.ts renders`);
  return sql;
}

export async function readViews(dialect: Dialect, file = VIEWS_FILE): Promise<string> {
  return renderViews(await readFile(file, 'utf8'), dialect);
}
