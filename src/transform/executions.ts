/** Executions with their results and ranks -> rows (spec 2.4, 2.5). */
import type { PromptResultItem, RankDetail } from '../api/schemas/hierarchical.ts';
import { rankRawValues } from '../api/schemas/rank-number.ts';
import type { LegacyTaskDetail } from '../api/schemas/legacy.ts';
import type { ExecutionRankRow, PromptExecutionRow } from './rows.ts';
import { apiTimestampToIso } from './time.ts';

/**
 * A rank is valid only when it is a positive integer (spec 2.5 rule 2): an empty rank or
 * `position <= 0` becomes NULL, never 0, so AVG/MIN over positions only see real ranks.
 */
export function validPosition(position: number | null): number | null {
  if (position === null || !Number.isFinite(position) || !Number.isInteger(position)) return null;
  return position > 0 ? position : null;
}

/**
 * The daily results item -> the execution row. `prompt_task_id` is the returned value, never
 * derived (spec 1). A `missing` result keeps answer/think null; its ranks are still real data.
 * `enrichment` carries legacy task detail's created_at/updated_at when that enrichment is on.
 */
export function toExecutionRow(
  r: PromptResultItem,
  enrichment?: Pick<LegacyTaskDetail, 'created_at' | 'updated_at'> | null,
): PromptExecutionRow {
  return {
    prompt_task_id: r.prompt_task_id,
    task_id: r.task_id,
    project_id: r.project_id,
    customer_id: r.customer_id,
    prompt_name: r.prompt_name,
    date_time: r.date_time,
    hours: r.hours,
    status: r.status,
    model: r.model,
    engine: r.engine,
    brand_exposure: r.brand_exposure,
    screenshot_url: r.screenshot_url,
    result_status: r.result_status,
    // An answer only exists when result_status is available; a server that sends text with
    // `missing` contradicts itself, and the status is the field the spec defines the rule on.
    answer: r.result_status === 'missing' ? null : r.answer,
    think: r.result_status === 'missing' ? null : r.think,
    rank_exposure: r.rank_exposure,
    rank_exposure_number: r.rank_exposure_number,
    ...executionTimes(enrichment),
  };
}

/** The execution row's created_at/updated_at from legacy task detail (null without it). */
export function executionTimes(
  enrichment?: Pick<LegacyTaskDetail, 'created_at' | 'updated_at'> | null,
): Pick<PromptExecutionRow, 'created_at' | 'updated_at'> {
  return {
    created_at: apiTimestampToIso(enrichment?.created_at),
    updated_at: apiTimestampToIso(enrichment?.updated_at),
  };
}

/**
 * Every rank_details item is kept, in order; invalid positions become NULL. Rank numbers that are
 * not integers of their column are NULL too, with what the API sent in `raw_values`.
 */
export function toRankRows(promptTaskId: number, ranks: readonly RankDetail[]): ExecutionRankRow[] {
  return ranks.map((r, ordinal) => ({
    prompt_task_id: promptTaskId,
    ordinal,
    brand: r.brand,
    brand_short: r.brand_short,
    position: validPosition(r.position),
    visibility: r.visibility,
    score: r.score,
    raw_values: rankRawValues(r) ?? null,
  }));
}
