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
  /** Brands in the question-rank table (those ranked in the most runs). @default 5 */
  readonly questionBrands?: number;
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

/**
 * The overview first (volume, brands, domains), then the modelled views' measures (share of voice,
 * own-site citations, question ranks), then one rank chart per platform.
 */
async function sections(data: ReportData, opts: ReportOptions): Promise<Section[]> {
  return [
    ...(await overviewSections(data, opts)),
    ...measureSections(data, opts),
    ...(await rankSections(data, opts)),
  ];
}

/** Share of voice per platform, own-site versus third-party citations, question ranks of the top brands. */
function measureSections(data: ReportData, opts: ReportOptions): Section[] {
  const perPlatform = opts.brandsPerPlatform ?? 8;
  const platforms = [...new Set(data.voice.map((v) => v.platform))].sort();
  const voiceRows: (string | number)[][] = [];
  for (const platform of platforms) {
    const items = data.voice.filter((v) => v.platform === platform);
    const total = items.reduce((n, v) => n + v.items, 0);
    for (const v of items.slice(0, perPlatform)) {
      voiceRows.push([platform, v.brand, v.items, total, percent(total > 0 ? v.items / total : 0)]);
    }
  }
  const ownedRows = [...new Set(data.owned.map((o) => o.platform))].sort().map((platform) => {
    const own = data.owned.find((o) => o.platform === platform && o.owned)?.citations ?? 0;
    const third = data.owned.find((o) => o.platform === platform && !o.owned)?.citations ?? 0;
    return [platform, own, third, percent(own + third > 0 ? own / (own + third) : 0)];
  });
  // The brands ranked in the most runs overall, and every question one of them is ranked in.
  const byBrand = new Map<string, number>();
  for (const q of data.questions) byBrand.set(q.brand, (byBrand.get(q.brand) ?? 0) + q.runs_ranked);
  const top = [...byBrand]
    .filter(([, n]) => n > 0)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .slice(0, opts.questionBrands ?? 5)
    .map(([b]) => b);
  const cell = new Map(data.questions.map((q) => [`${q.question}|${q.brand}`, q]));
  const questions = [
    ...new Set(
      data.questions.filter((q) => top.includes(q.brand) && q.runs_ranked > 0).map((q) => q.question),
    ),
  ].sort();
  return [
    {
      id: 'share-of-voice',
      title: 'Share of voice per platform',
      note: `Each brand's valid rank items over all valid rank items of its platform on these days (the ${perPlatform} largest per platform; geo.brand_share_of_voice_daily).`,
      svg: null,
      table: {
        name: 'share-of-voice',
        caption: 'valid rank items, of the platform’s, and the share',
        head: ['platform', 'brand', 'valid rank items', 'platform total', 'share of voice'],
        rows: voiceRows,
      },
    },
    {
      id: 'owned-citations',
      title: 'Own-site versus third-party citations',
      note: 'Citations of a domain that is, or is below, a host of the monitoring task’s brand_urls count as own-site (geo.citations_daily.owned).',
      svg: null,
      table: {
        name: 'owned-citations',
        caption: 'citations per platform',
        head: ['platform', 'own site', 'third party', 'own share'],
        rows: ownedRows,
      },
    },
    {
      id: 'question-ranks',
      title: 'Question-level ranks of the top brands',
      note: `Best and average valid position over the runs of each question (geo.question_rank_daily), for the ${top.length} brands ranked in the most runs; runs counts every run of the question on the platforms naming the brand, also on days it is not named.`,
      svg: null,
      table: {
        name: 'question-ranks',
        caption: 'best / average position (runs ranked of runs)',
        head: ['question', ...top],
        rows: questions.map((question) => [
          question,
          ...top.map((brand) => {
            const q = cell.get(`${question}|${brand}`);
            if (!q || q.runs_ranked === 0) return '';
            return `${q.best_position} / ${fixed2(q.avg_position!)} (${q.runs_ranked} of ${q.runs})`;
          }),
        ]),
      },
    },
  ];
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
