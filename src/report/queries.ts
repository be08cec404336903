/**
 * The report's numbers, read through Warehouse.query() with the SQL of sql/reports/report-*.sql
 * (portable: PostgreSQL and DuckDB alike). Every value is a `$n` parameter.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Warehouse } from '../load/warehouse.ts';
import type { Json } from '../transform/rows.ts';

export interface ReportFilter {
  /** First day, inclusive (YYYY-MM-DD). */
  readonly from?: string | undefined;
  /** Last day, inclusive. */
  readonly to?: string | undefined;
  /** Page project IDs (customer_id); empty or absent: all. */
  readonly customers?: readonly number[] | undefined;
}

export interface RankPoint {
  engine: string;
  date: string;
  brand: string;
  valid_ranks: number;
  avg_position: number;
}
export interface BrandShare {
  brand: string;
  ranked: number;
  executions: number;
  share: number;
}
export interface DomainCount {
  domain: string;
  citations: number;
  executions_citing: number;
}
export interface DayExecutions {
  date: string;
  executions: number;
  missing: number;
  missing_rate: number;
}

/** A brand's valid rank items on one platform (share of voice = items / the platform's total). */
export interface VoiceItems {
  platform: string;
  brand: string;
  items: number;
}
/** Citations of the brands' own sites or of third parties, on one platform. */
export interface OwnedCitations {
  platform: string;
  owned: boolean;
  citations: number;
}
/** One question and brand over the report's days. */
export interface QuestionRank {
  question: string;
  brand: string;
  runs: number;
  runs_ranked: number;
  best_position: number | null;
  avg_position: number | null;
}

export interface ReportData {
  ranks: RankPoint[];
  shares: BrandShare[];
  domains: DomainCount[];
  days: DayExecutions[];
  voice: VoiceItems[];
  owned: OwnedCitations[];
  questions: QuestionRank[];
}

const sqlFile = (name: string) =>
  readFileSync(fileURLToPath(new URL(`../../sql/reports/${name}.sql`, import.meta.url)), 'utf8');

/**
 * The `{{filter}}` of a report query: `AND` conditions on the day column and customer_id, made
 * of placeholders numbered after `first - 1` parameters the query already has.
 */
export function filterSql(
  filter: ReportFilter,
  dayColumn: string,
  first = 1,
): { sql: string; params: Json[] } {
  const params: Json[] = [];
  const parts: string[] = [];
  const next = (v: Json) => {
    params.push(v);
    return `$${first + params.length - 1}`;
  };
  if (filter.from !== undefined) parts.push(`${dayColumn} >= CAST(${next(filter.from)} AS DATE)`);
  if (filter.to !== undefined) parts.push(`${dayColumn} <= CAST(${next(filter.to)} AS DATE)`);
  if (filter.customers?.length)
    parts.push(`customer_id IN (${filter.customers.map((c) => next(c)).join(', ')})`);
  return { sql: parts.map((p) => `AND ${p}`).join(' '), params };
}

async function run(
  warehouse: Warehouse,
  name: string,
  filter: ReportFilter,
  dayColumn: string,
  leading: Json[] = [],
): Promise<Record<string, unknown>[]> {
  const f = filterSql(filter, dayColumn, leading.length + 1);
  return warehouse.query(sqlFile(name).replaceAll('{{filter}}', f.sql), [...leading, ...f.params]);
}

const num = (v: unknown) => Number(v);

export async function readReportData(
  warehouse: Warehouse,
  filter: ReportFilter,
  opts: { domains?: number } = {},
): Promise<ReportData> {
  const ranks = (await run(warehouse, 'report-brand-ranks', filter, 'date')).map((r) => ({
    engine: String(r.engine),
    date: String(r.date),
    brand: String(r.brand),
    valid_ranks: num(r.valid_ranks),
    avg_position: num(r.avg_position),
  }));
  const shares = (await run(warehouse, 'report-brand-share', filter, 'date_time')).map((r) => ({
    brand: String(r.brand),
    ranked: num(r.ranked),
    executions: num(r.executions),
    share: num(r.executions) > 0 ? num(r.ranked) / num(r.executions) : 0,
  }));
  const domains = (await run(warehouse, 'report-domains', filter, 'date', [opts.domains ?? 15])).map((r) => ({
    domain: String(r.domain),
    citations: num(r.citations),
    executions_citing: num(r.executions_citing),
  }));
  const days = (await run(warehouse, 'report-executions', filter, 'date')).map((r) => ({
    date: String(r.date),
    executions: num(r.executions),
    missing: num(r.missing),
    missing_rate: num(r.executions) > 0 ? num(r.missing) / num(r.executions) : 0,
  }));
  const voice = (await run(warehouse, 'report-share-of-voice', filter, 'date')).map((r) => ({
    platform: String(r.platform_name ?? '(unknown platform)'),
    brand: String(r.brand),
    items: num(r.items),
  }));
  const owned = (await run(warehouse, 'report-owned-citations', filter, 'date')).map((r) => ({
    platform: String(r.platform_name ?? '(unknown platform)'),
    owned: r.owned === true,
    citations: num(r.citations),
  }));
  const questions = (await run(warehouse, 'report-question-ranks', filter, 'date')).map((r) => ({
    question: String(r.question),
    brand: String(r.brand),
    runs: num(r.runs),
    runs_ranked: num(r.runs_ranked),
    best_position: r.best_position === null ? null : num(r.best_position),
    avg_position: r.avg_position === null ? null : num(r.avg_position),
  }));
  return { ranks, shares, domains, days, voice, owned, questions };
}
