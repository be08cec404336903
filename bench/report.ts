/** The printed table: scenario, size, figure, bound/baseline, ratio, target, met? */

export interface TableRow {
  scenario: string;
  size: string;
  figure: string;
  baseline: string;
  ratio: string;
  target: string;
  met: string;
}

const HEADER: TableRow = {
  scenario: 'scenario',
  size: 'size',
  figure: 'figure',
  baseline: 'bound / baseline',
  ratio: 'ratio',
  target: 'target',
  met: 'met?',
};

const COLUMNS = Object.keys(HEADER) as (keyof TableRow)[];

/** Display width: CJK and other wide characters count double (none expected, but be safe). */
function width(s: string): number {
  let w = 0;
  for (const ch of s)
    w += /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60]/.test(ch) ? 2 : 1;
  return w;
}

function pad(s: string, n: number): string {
  return s + ' '.repeat(Math.max(0, n - width(s)));
}

export function formatTable(rows: readonly TableRow[]): string {
  const all = [HEADER, ...rows];
  const widths = COLUMNS.map((c) => Math.max(...all.map((r) => width(r[c]))));
  const line = (r: TableRow) =>
    COLUMNS.map((c, i) => pad(r[c], widths[i]!))
      .join(' | ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('-|-');
  return [line(HEADER), rule, ...rows.map(line)].join('\n');
}

export const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
export const ratio = (x: number | null): string => (x === null ? 'n/a' : x.toFixed(2));
export const int = (n: number): string => Math.round(n).toLocaleString('en-US');
export const met = (ok: boolean | null): string => (ok === null ? 'n/a' : ok ? 'yes' : 'NO');
