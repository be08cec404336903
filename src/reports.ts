/** What a marketing analyst wants first, from the BI views (queries in sql/reports/). */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Warehouse } from './load/warehouse.ts';

const reportSql = (name: string) =>
  readFileSync(fileURLToPath(new URL(`../sql/reports/${name}.sql`, import.meta.url)), 'utf8');

function table(rows: Record<string, unknown>[], columns: string[]): string {
  const cells = rows.map((r) => columns.map((c) => String(r[c] ?? '')));
  const widths = columns.map((c, i) => Math.max(width(c), ...cells.map((row) => width(row[i]!))));
  const line = (vals: string[]) => vals.map((v, i) => v + ' '.repeat(widths[i]! - width(v))).join('  ');
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/** Display width: CJK characters take two columns in a terminal. */
function width(s: string): number {
  let w = 0;
  for (const ch of s)
    w += /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/.test(
      ch,
    )
      ? 2
      : 1;
  return w;
}

export async function analystReport(
  warehouse: Warehouse,
  opts: { brandsPerPlatform?: number; domains?: number } = {},
) {
  const counts = await warehouse.counts();
  const brands = await warehouse.query(reportSql('top-brands'), [3]);
  const perPlatform = new Map<string, Record<string, unknown>[]>();
  for (const b of brands) {
    const list = perPlatform.get(String(b.engine)) ?? [];
    if (list.length < (opts.brandsPerPlatform ?? 5)) list.push(b);
    perPlatform.set(String(b.engine), list);
  }
  const domains = await warehouse.query(reportSql('top-domains'), [opts.domains ?? 10]);

  const out: string[] = [
    'Rows per table',
    table(
      Object.entries(counts).map(([t, n]) => ({ table: t, rows: n })),
      ['table', 'rows'],
    ),
  ];
  out.push('', 'Top brands by average rank, per platform (valid ranks only; lower is better)');
  for (const [engine, list] of perPlatform) {
    out.push('', `[${engine}]`, table(list, ['brand', 'avg_position', 'best_position', 'valid_ranks']));
  }
  out.push('', 'Most cited domains', table(domains, ['domain', 'citations', 'executions_citing']));
  return out.join('\n');
}
