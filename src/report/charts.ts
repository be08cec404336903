/**
 * The report's charts: Vega-Lite specs compiled and rendered to SVG text in Node (vega's
 * headless View, renderer 'none': no canvas, no browser, no network; data is inline).
 */
import type { TopLevelSpec } from 'vega-lite';
import type { BrandShare, DayExecutions, DomainCount, RankPoint } from './queries.ts';

/** Fonts that have Chinese glyphs on macOS, Windows and Linux, then the generic fallback. */
export const FONT_STACK =
  'system-ui, -apple-system, "Segoe UI", "PingFang SC", "Hiragino Sans GB", "Microsoft YaHei", "Noto Sans CJK SC", "Source Han Sans SC", "WenQuanYi Micro Hei", sans-serif';

const CONFIG = {
  font: FONT_STACK,
  background: 'white',
  view: { stroke: null },
  axis: { labelFontSize: 11, titleFontSize: 12, labelLimit: 180 },
  legend: { labelFontSize: 11, labelLimit: 160 },
};

/**
 * vega and vega-lite are loaded when a chart is first drawn, not with the CLI: together they are
 * about 0.4 s of the start of every command, and only `report` draws.
 */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const [{ parse, View }, { compile }] = await Promise.all([import('vega'), import('vega-lite')]);
  const vegaSpec = compile({ ...spec, config: CONFIG } as TopLevelSpec).spec;
  const view = new View(parse(vegaSpec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Lines of a platform's brands over the days; rank 1 at the top. */
export function rankChart(engine: string, points: readonly RankPoint[]): TopLevelSpec {
  return {
    title: engine,
    width: 440,
    height: 260,
    data: { values: points.map((p) => ({ ...p })) },
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'date', type: 'ordinal', title: 'day', axis: { labelAngle: -40 } },
      y: {
        field: 'avg_position',
        type: 'quantitative',
        title: 'average valid rank (1 = top)',
        scale: { reverse: true, zero: false, nice: true },
      },
      color: { field: 'brand', type: 'nominal', title: 'brand' },
    },
  };
}

export function shareChart(shares: readonly BrandShare[]): TopLevelSpec {
  return {
    width: 420,
    height: { step: 20 },
    data: { values: shares.map((s) => ({ ...s })) },
    mark: { type: 'bar', color: '#4c78a8' },
    encoding: {
      y: { field: 'brand', type: 'nominal', sort: '-x', title: null },
      x: {
        field: 'share',
        type: 'quantitative',
        title: 'share of executions in which the brand is ranked',
        axis: { format: '.0%' },
      },
    },
  };
}

export function domainChart(domains: readonly DomainCount[]): TopLevelSpec {
  return {
    width: 420,
    height: { step: 20 },
    data: { values: domains.map((d) => ({ ...d })) },
    mark: { type: 'bar', color: '#54a24b' },
    encoding: {
      y: { field: 'domain', type: 'nominal', sort: '-x', title: null },
      x: { field: 'citations', type: 'quantitative', title: 'citations' },
    },
  };
}

/** Bars of executions per day, and the missing-answer rate as a line on its own axis. */
export function executionsChart(days: readonly DayExecutions[]): TopLevelSpec {
  return {
    width: 440,
    height: 260,
    data: { values: days.map((d) => ({ ...d })) },
    encoding: { x: { field: 'date', type: 'ordinal', title: 'day', axis: { labelAngle: -40 } } },
    layer: [
      {
        mark: { type: 'bar', color: '#9ecae9' },
        encoding: { y: { field: 'executions', type: 'quantitative', title: 'executions' } },
      },
      {
        mark: { type: 'line', color: '#e45756', point: { color: '#e45756' } },
        encoding: {
          y: {
            field: 'missing_rate',
            type: 'quantitative',
            title: 'missing-answer rate',
            axis: { format: '.1%', titleColor: '#e45756' },
          },
        },
      },
    ],
    resolve: { scale: { y: 'independent' } },
  };
}
