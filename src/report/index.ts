/**
 * `geo-sync report`: one self-contained HTML file with charts (inline SVG rendered in Node) and
 * the numbers of each chart in a table beside it, from the BI views of either warehouse.
 */
import type { Warehouse } from '../load/warehouse.ts';
import { domainChart, executionsChart, rankChart, renderSvg, shareChart } from './charts.ts';
import { pageHtml, type Section } from './html.ts';
import { readReportData, type RankPoint, type ReportData, type ReportFilter } from './queries.ts';

export { readReportData, type ReportData, type ReportFilter } from './queries.ts';

export interface ReportOptions extends ReportFilter {
  /** Brands per platform in the rank charts (those with the most valid ranks). @default 8 */
  readonly brandsPerPlatform?: number;
  /** Brands in the share chart. @default 15 */
  readonly brands?: number;
  /** Domains in the citation chart. @default 15 */
  readonly domains?: number;
  /** @default new Date() */
  readonly now?: Date;
}

const fixed2 = (n: number) => n.toFixed(2);
const percent = (n: number) => `${(n * 100).toFixed(1)}%`;

/** Each platform's brands with the most valid ranks over the report's days. */
export function topBrandsPerEngine(ranks: readonly RankPoint[], n: number): Map<string, string[]> {
  const totals = new Map<string, Map<string, number>>();
  for (const r of ranks) {
    const m = totals.get(r.engine) ?? new Map<string, number>();
    m.set(r.brand, (m.get(r.brand) ?? 0) + r.valid_ranks);
    totals.set(r.engine, m);
  }
  const out = new Map<string, string[]>();
  for (const [engine, m] of [...totals].sort(([a], [b]) => a.localeCompare(b))) {
    out.set(
      engine,
      [...m]
        .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
        .slice(0, n)
        .map(([brand]) => brand),
    );
  }
  return out;
}

/** The overview first (volume, brands, domains), then one rank chart per platform. */
async function sections(data: ReportData, opts: ReportOptions): Promise<Section[]> {
  return [...(await overviewSections(data, opts)), ...(await rankSections(data, opts))];
}

async function rankSections(data: ReportData, opts: ReportOptions): Promise<Section[]> {
  const out: Section[] = [];
  const perPlatform = opts.brandsPerPlatform ?? 8;
  for (const [engine, brands] of topBrandsPerEngine(data.ranks, perPlatform)) {
    const points = data.ranks.filter((r) => r.engine === engine && brands.includes(r.brand));
    const days = [...new Set(points.map((p) => p.date))].sort();
    const cell = new Map(points.map((p) => [`${p.brand}|${p.date}`, p]));
    out.push({
      id: `ranks-${engine}`,
      title: `Average valid rank per brand and day: ${engine}`,
      note: `The ${brands.length} brands with the most valid ranks on ${engine}; lower is better, empty and <= 0 ranks are not counted.`,
      svg: await renderSvg(rankChart(engine, points)),
      table: {
        name: `ranks-${engine}`,
        caption: 'average valid rank (valid ranks)',
        head: ['brand', ...days],
        rows: brands.map((b) => [
          b,
          ...days.map((d) => {
            const p = cell.get(`${b}|${d}`);
            return p ? `${fixed2(p.avg_position)} (${p.valid_ranks})` : '';
          }),
        ]),
      },
    });
  }
  if (out.length === 0) {
    out.push({
      id: 'ranks',
      title: 'Average valid rank per brand and day',
      svg: null,
      table: { name: 'ranks', caption: 'no valid ranks', head: ['brand'], rows: [] },
    });
  }

  return out;
}

async function overviewSections(data: ReportData, opts: ReportOptions): Promise<Section[]> {
  const out: Section[] = [];
  const shares = data.shares.slice(0, opts.brands ?? 15);
  out.push({
    id: 'executions',
    title: 'Executions per day and missing-answer rate',
    svg: data.days.length ? await renderSvg(executionsChart(data.days)) : null,
    table: {
      name: 'executions',
      caption: 'executions, without an answer, and their share',
      head: ['day', 'executions', 'missing', 'missing rate'],
      rows: data.days.map((d) => [d.date, d.executions, d.missing, percent(d.missing_rate)]),
    },
  });
  out.push({
    id: 'brand-share',
    title: 'Share of executions in which each brand is ranked',
    note: `Executions with a valid rank for the brand, over all ${data.shares[0]?.executions ?? 0} executions of these days (all platforms).`,
    svg: shares.length ? await renderSvg(shareChart(shares)) : null,
    table: {
      name: 'brand-share',
      caption: 'ranked executions / executions',
      head: ['brand', 'ranked', 'executions', 'share'],
      rows: shares.map((s) => [s.brand, s.ranked, s.executions, percent(s.share)]),
    },
  });

  out.push({
    id: 'domains',
    title: 'Top cited domains',
    svg: data.domains.length ? await renderSvg(domainChart(data.domains)) : null,
    table: {
      name: 'domains',
      caption: 'citations (source rows) and executions citing the domain',
      head: ['domain', 'citations', 'executions citing'],
      rows: data.domains.map((d) => [d.domain, d.citations, d.executions_citing]),
    },
  });

  return out;
}

export async function buildReport(warehouse: Warehouse, opts: ReportOptions = {}): Promise<string> {
  const data = await readReportData(warehouse, opts, { domains: opts.domains ?? 15 });
  const days =
    data.days.length > 0
      ? `${data.days[0]!.date} to ${data.days.at(-1)!.date}`
      : `${opts.from ?? 'the first day'} to ${opts.to ?? 'the last day'}`;
  const customers = opts.customers?.length ? `customers ${opts.customers.join(', ')}` : 'all customers';
  const meta = `${days} · ${customers} · ${warehouse.dialect} warehouse · generated ${(opts.now ?? new Date()).toISOString()}`;
  return pageHtml('geo-sync report', meta, await sections(data, opts));
}
