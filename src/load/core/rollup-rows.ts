/**
 * The per-day aggregates of some units (platform task, day), computed from their rows: what a
 * sync's refresh stores for the stale units (rollups.ts refreshStaleUnits). The same
 * measures as the SQL recomputation (rollups.ts SELECTS), which `rollups refresh`, the upgrade
 * fill and `check rollups_match` use: the check holds the two to the same rows, and the tests
 * compare them on every kind of write. Pure: the rows come in, the aggregate rows go out.
 */
import type {
  RollupBrandsRow,
  RollupDomainsRow,
  RollupExecutionsRow,
  RollupQuestionBrandsRow,
  RollupUnit,
} from '../../transform/rows.ts';

/** An execution as the aggregates read it, with its screenshot row's URL (null without one). */
export interface ExecutionFacts {
  prompt_task_id: number;
  date_time: string;
  task_id: number;
  project_id: number;
  customer_id: number | null;
  engine: string;
  model: string;
  prompt_name: string;
  result_status: string;
  screenshot_url: string | null;
  shot_url: string | null;
}

export interface RankFacts {
  prompt_task_id: number;
  brand: string;
  position: number | null;
  visibility: number | null;
  score: number | null;
}

/** One execution's citations of one domain, with the domain normalised (dialect-sql siteOf). */
export interface CitationFacts {
  prompt_task_id: number;
  domain: string;
  site: string;
  citations: number;
}

export interface UnitFacts {
  executions: readonly ExecutionFacts[];
  ranks: readonly RankFacts[];
  citations: readonly CitationFacts[];
  /** Each monitoring task's brand_urls hosts, normalised. */
  hosts: ReadonlyMap<number, readonly string[]>;
}

type Grain = RollupUnit;

/** The rows of each aggregate table, by table. */
export interface RollupRows {
  rollup_executions_daily: RollupExecutionsRow[];
  rollup_brands_daily: RollupBrandsRow[];
  rollup_domains_daily: RollupDomainsRow[];
  rollup_question_brands_daily: RollupQuestionBrandsRow[];
}

/** Monday of the ISO week of a `YYYY-MM-DD` day (date_trunc('week', day)). */
export function weekStart(day: string): string {
  let monday = MONDAYS.get(day);
  if (monday === undefined) {
    const t = Date.parse(`${day}T00:00:00Z`);
    const weekday = (new Date(t).getUTCDay() + 6) % 7; // Monday 0
    monday = new Date(t - weekday * 86_400_000).toISOString().slice(0, 10);
    if (MONDAYS.size > 10_000) MONDAYS.clear();
    MONDAYS.set(day, monday);
  }
  return monday;
}
/** Every output row asks for its day's Monday: a few days per transaction, asked thousands of times. */
const MONDAYS = new Map<string, string>();

/**
 * A grouping key of several parts. NUL cannot occur in them (the text rule keeps it out of
 * every stored text, text.ts), so joining by it is unambiguous, and far cheaper than
 * JSON.stringify on the thousands of rows a transaction groups.
 */
const key = (...parts: unknown[]) => parts.join('\u0000');

/** Whether `site` is, or is below, one of `hosts` (dialect-sql ownedBy). */
export function ownedBy(site: string, hosts: readonly string[]): boolean {
  return hosts.some((h) => h !== '' && (site === h || site.endsWith(`.${h}`)));
}

/** Rows grouped by a key, in first-seen order. */
function groupBy<T>(items: Iterable<T>, key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const t of items) {
    const k = key(t);
    const list = out.get(k);
    if (list) list.push(t);
    else out.set(k, [t]);
  }
  return out;
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const least = (xs: readonly (number | null)[]): number | null => {
  let m: number | null = null;
  for (const x of xs) if (x !== null && (m === null || x < m)) m = x;
  return m;
};

const grainOf = (e: ExecutionFacts): Grain => ({
  date: e.date_time,
  week_start: weekStart(e.date_time),
  task_id: e.task_id,
  project_id: e.project_id,
  customer_id: e.customer_id,
});
const grainKey = (e: ExecutionFacts) => key(e.date_time, e.task_id, e.project_id, e.customer_id);

/** One execution's rank items of one brand (the view execution_brand_ranks' row). */
interface ExecutionBrand {
  e: ExecutionFacts;
  brand: string;
  items: number;
  valid: number;
  positionSum: number;
  best: number | null;
  visibilitySum: number;
  visibilityItems: number;
  scoreSum: number;
  scoreItems: number;
}

function executionBrands(executions: ReadonlyMap<number, ExecutionFacts>, ranks: readonly RankFacts[]) {
  const out: ExecutionBrand[] = [];
  for (const items of groupBy(ranks, (r) => key(r.prompt_task_id, r.brand)).values()) {
    const e = executions.get(items[0]!.prompt_task_id);
    if (!e) continue; // a rank without its execution counts nowhere (check: children_have_execution)
    const positions = items.map((r) => r.position).filter((p): p is number => p !== null);
    const visibility = items.map((r) => r.visibility).filter((v): v is number => v !== null);
    const score = items.map((r) => r.score).filter((v): v is number => v !== null);
    out.push({
      e,
      brand: items[0]!.brand,
      items: items.length,
      valid: positions.length,
      positionSum: sum(positions),
      best: least(positions),
      visibilitySum: sum(visibility),
      visibilityItems: visibility.length,
      scoreSum: sum(score),
      scoreItems: score.length,
    });
  }
  return out;
}

/** The aggregate rows of the units whose every row `facts` holds. */
export function rollupRowsOf(facts: UnitFacts): RollupRows {
  const executions = new Map(facts.executions.map((e) => [e.prompt_task_id, e]));
  const out: RollupRows = {
    rollup_executions_daily: [],
    rollup_brands_daily: [],
    rollup_domains_daily: [],
    rollup_question_brands_daily: [],
  };

  // Per execution: its valid rank items and its citations, the units' denominators.
  const validOf = new Map<number, number>();
  for (const r of facts.ranks)
    if (r.position !== null) validOf.set(r.prompt_task_id, (validOf.get(r.prompt_task_id) ?? 0) + 1);
  const citationsOf = new Map<number, number>();
  for (const c of facts.citations)
    citationsOf.set(c.prompt_task_id, (citationsOf.get(c.prompt_task_id) ?? 0) + c.citations);
  for (const group of groupBy(executions.values(), (e) => key(grainKey(e), e.engine, e.model)).values()) {
    const e = group[0]!;
    out.rollup_executions_daily.push({
      ...grainOf(e),
      engine: e.engine,
      model: e.model,
      executions: group.length,
      available: group.filter((x) => x.result_status === 'available').length,
      missing: group.filter((x) => x.result_status === 'missing').length,
      // COALESCE(NULLIF(screenshot's url, ''), NULLIF(listed url, '')) IS NOT NULL
      with_screenshot: group.filter((x) => Boolean(x.shot_url) || Boolean(x.screenshot_url)).length,
      valid_rank_items: sum(group.map((x) => validOf.get(x.prompt_task_id) ?? 0)),
      citations: sum(group.map((x) => citationsOf.get(x.prompt_task_id) ?? 0)),
    });
  }

  const brands = executionBrands(executions, facts.ranks);
  for (const group of groupBy(brands, (b) => key(grainKey(b.e), b.e.engine, b.e.model, b.brand)).values()) {
    const { e, brand } = group[0]!;
    const bests = group.map((b) => b.best);
    const ranked = bests.filter((b): b is number => b !== null);
    out.rollup_brands_daily.push({
      ...grainOf(e),
      engine: e.engine,
      model: e.model,
      brand,
      rank_items: sum(group.map((b) => b.items)),
      valid_rank_items: sum(group.map((b) => b.valid)),
      position_sum: sum(group.map((b) => b.positionSum)),
      executions_ranked: ranked.length,
      best_position_sum: sum(ranked),
      best_position: least(bests),
      top1_executions: ranked.filter((b) => b === 1).length,
      top3_executions: ranked.filter((b) => b <= 3).length,
      visibility_sum: sum(group.map((b) => b.visibilitySum)),
      visibility_items: sum(group.map((b) => b.visibilityItems)),
      score_sum: sum(group.map((b) => b.scoreSum)),
      score_items: sum(group.map((b) => b.scoreItems)),
    });
  }

  // A question's runs: every execution of it that day on the platform task, ranked or not.
  const runs = new Map<string, number>();
  for (const e of executions.values()) {
    const k = key(e.date_time, e.task_id, e.prompt_name);
    runs.set(k, (runs.get(k) ?? 0) + 1);
  }
  for (const group of groupBy(brands, (b) => key(grainKey(b.e), b.e.prompt_name, b.brand)).values()) {
    const { e, brand } = group[0]!;
    const bests = group.map((b) => b.best);
    const ranked = bests.filter((b): b is number => b !== null);
    out.rollup_question_brands_daily.push({
      ...grainOf(e),
      question: e.prompt_name,
      brand,
      runs: runs.get(key(e.date_time, e.task_id, e.prompt_name))!,
      runs_ranked: ranked.length,
      best_position_sum: sum(ranked),
      best_position: least(bests),
    });
  }

  const cited = facts.citations.flatMap((c) => {
    const e = executions.get(c.prompt_task_id);
    return e ? [{ e, c }] : [];
  });
  for (const group of groupBy(cited, ({ e, c }) => key(grainKey(e), c.domain)).values()) {
    const { e, c } = group[0]!;
    out.rollup_domains_daily.push({
      ...grainOf(e),
      domain: c.domain,
      citations: sum(group.map((g) => g.c.citations)),
      executions_citing: new Set(group.map((g) => g.e.prompt_task_id)).size,
      owned: ownedBy(c.site, facts.hosts.get(e.project_id) ?? []),
    });
  }
  return out;
}
