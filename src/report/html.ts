/**
 * The report as one self-contained HTML file: inline CSS, inline SVG charts, no script, and a
 * Content-Security-Policy that forbids every fetch, so it opens offline and stays offline.
 */
import { FONT_STACK } from './charts.ts';

export function escapeHtml(s: string): string {
  return s
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

export interface Table {
  /** A stable name (`data-table`), for readers and tests. */
  name: string;
  caption: string;
  head: string[];
  /** The first cell of each row is its header. */
  rows: (string | number)[][];
}

export interface Section {
  id: string;
  title: string;
  note?: string;
  /** SVG text, or null when there is nothing to draw. */
  svg: string | null;
  table: Table;
}

export function tableHtml(t: Table): string {
  const head = t.head.map((h) => `<th scope="col">${escapeHtml(h)}</th>`).join('');
  const rows = t.rows
    .map(
      ([first, ...rest]) =>
        `<tr><th scope="row">${escapeHtml(String(first))}</th>${rest.map((c) => `<td>${escapeHtml(String(c))}</td>`).join('')}</tr>`,
    )
    .join('\n');
  return `<table data-table="${escapeHtml(t.name)}"><caption>${escapeHtml(t.caption)}</caption><thead><tr>${head}</tr></thead><tbody>\n${rows}\n</tbody></table>`;
}

const CSS = `
:root { color-scheme: light; }
body { font-family: ${FONT_STACK}; margin: 24px 32px; color: #222; background: #fff; }
svg text { font-family: ${FONT_STACK}; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 4px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
p.meta, p.note { color: #555; font-size: 13px; margin: 4px 0 10px; }
.row { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
figure { margin: 0; flex: 0 0 auto; }
.numbers { flex: 1 1 320px; overflow-x: auto; max-height: 520px; overflow-y: auto; }
table { border-collapse: collapse; font-size: 12px; }
caption { text-align: left; color: #555; padding-bottom: 4px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; }
td { text-align: right; font-variant-numeric: tabular-nums; }
thead th { background: #f4f4f4; position: sticky; top: 0; }
tbody th { text-align: left; font-weight: normal; }
.empty { color: #888; font-style: italic; }
`;

const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

export function pageHtml(title: string, meta: string, sections: readonly Section[]): string {
  const body = sections
    .map(
      (s) => `<section id="${escapeHtml(s.id)}">
<h2>${escapeHtml(s.title)}</h2>
${s.note ? `<p class="note">${escapeHtml(s.note)}</p>` : ''}
<div class="row">
${s.svg ? `<figure>${s.svg}</figure>` : s.table.rows.length ? '' : '<figure><p class="empty">no data for these days and customers</p></figure>'}
<div class="numbers">${tableHtml(s.table)}</div>
</div>
</section>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="zh-CN">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${CSS}</style>
</head>
<body>
<header><h1>${escapeHtml(title)}</h1><p class="meta">${escapeHtml(meta)}</p></header>
${body}
</body>
</html>
`;
}
