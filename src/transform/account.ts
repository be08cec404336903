/** Finance and diagnosis -> rows (spec 2.9, 2.10). */
import type { Balance, Deduction } from '../api/schemas/account.ts';
import type { SiteDiagnosis } from '../api/schemas/diagnosis.ts';
import type { BalanceSnapshotRow, DeductionRow, Json, SiteDiagnosisRow } from './rows.ts';
import { apiInstant } from './time.ts';

/** The deduction's `project_id` is a prompt execution ID (spec 1): stored as prompt_task_id. */
export function toDeductionRow(d: Deduction): DeductionRow {
  return {
    id: d.id,
    user_id: d.user_id,
    prompt_task_id: d.project_id,
    diff_amount: d.diff_amount,
    before_amount: d.before_amount,
    after_amount: d.after_amount,
    remark: d.remark,
    // Validated by the schema (DateTimeText): never stored as raw text.
    created_at: apiInstant(d.created_at),
  };
}

export function toBalanceSnapshotRow(b: Balance, takenAt: Date, runId: string | null): BalanceSnapshotRow {
  return {
    taken_at: takenAt.toISOString(),
    run_id: runId,
    user_id: b.user_id,
    user_name: b.user_name,
    amount: b.amount,
  };
}

/**
 * A diagnosis record; null for `not_started`, which has no record to keep (diagnosis_id null).
 * Report members are kept as JSON: their inner structure is not shown (2.9).
 */
export function toSiteDiagnosisRow(
  customerId: number,
  d: SiteDiagnosis,
  seenAt: Date,
): SiteDiagnosisRow | null {
  if (d.status === 'not_started' || d.diagnosis_id === null || d.diagnosis_id === undefined) return null;
  const r = d.result ?? null;
  const j = (v: unknown): Json => (v === undefined ? null : (v as Json));
  return {
    diagnosis_id: String(d.diagnosis_id),
    customer_id: customerId,
    status: d.status,
    diagnosis_task_id:
      d.diagnosis_task_id === null || d.diagnosis_task_id === undefined ? null : String(d.diagnosis_task_id),
    result_ready: d.result_ready ?? null,
    progress_percent: d.progress_percent ?? null,
    current_step: d.current_step ?? null,
    error: j(d.error),
    project_url: d.project_url ?? null,
    url: d.url ?? null,
    is_current_url: d.is_current_url ?? null,
    composite_score: r?.composite_score ?? null,
    summary_text: j(r?.summary_text),
    top_issues: j(r?.top_issues),
    quick_wins: j(r?.quick_wins),
    modules_summary: j(r?.modules_summary),
    platform_scores: j(r?.platform_scores),
    observation: j(r?.observation),
    page_diagnostics: j(r?.page_diagnostics),
    result_json: j(r?.result_json),
    seen_at: seenAt.toISOString(),
  };
}
