/**
 * Site diagnosis (spec 2.9, 3.1). Field types are "not shown beyond the names" (4.2 rule 4), so
 * IDs accept integers or strings, and everything but `status` is optional. The report members'
 * inner structure is not shown: they are kept as JSON, and members whose type is not shown are
 * read leniently: an unexpected spelling never costs the diagnosis.
 */
import { z } from 'zod';
import { KeyText, storedJson } from './common.ts';

export const DiagnosisStatus = z.enum(['not_started', 'queued', 'running', 'completed', 'failed']);
export type DiagnosisStatus = z.infer<typeof DiagnosisStatus>;

const IdLike = z.union([z.number().int(), z.string().min(1)]);

/** `diagnosis_id` is the table's key (text): a string longer than a key is stored with fails it. */
const DiagnosisId = z.union([z.number().int(), KeyText.min(1)]);

/** A report member stored whole as JSON: its inner structure is not shown, any JSON is kept. */
const Member = storedJson(z.unknown()).optional();

/**
 * A number the spec names without a type (a score, a percentage): a JSON number, or a number in
 * text ("85.5", "40%"), read as a double; anything else reads as unknown (null), a number too
 * large for a double too (DOUBLE PRECISION would hold Infinity, which is no score). The complete
 * report stays in `result_json`, so nothing is lost when a server spells a score differently.
 */
const LenientNumber = z.unknown().transform((v): number | null => {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v !== 'string') return null;
  const m = /^\s*(-?\d+(?:\.\d+)?)\s*%?\s*$/.exec(v);
  const n = m ? Number(m[1]) : NaN;
  return Number.isFinite(n) ? n : null;
});

/** Text the spec names without a type: non-text JSON is kept as its JSON text. */
const LenientText = z.unknown().transform((v): string | null => {
  if (v === undefined || v === null) return null;
  return typeof v === 'string' ? v : JSON.stringify(v);
});

export const DiagnosisReport = z.looseObject({
  composite_score: LenientNumber.optional(),
  summary_text: Member,
  top_issues: Member,
  quick_wins: Member,
  modules_summary: Member,
  platform_scores: Member,
  observation: Member,
  page_diagnostics: Member,
  result_json: Member,
});
export type DiagnosisReport = z.infer<typeof DiagnosisReport>;

export const SiteDiagnosis = z.looseObject({
  status: DiagnosisStatus,
  diagnosis_id: DiagnosisId.nullable().optional(),
  diagnosis_task_id: IdLike.nullable().optional(),
  created: z.boolean().optional(),
  result_ready: z.boolean().optional(),
  progress_percent: LenientNumber.optional(),
  current_step: LenientText.optional(),
  error: Member,
  project_url: z.string().nullable().optional(),
  url: z.string().nullable().optional(),
  is_current_url: z.boolean().nullable().optional(),
  result: DiagnosisReport.nullable().optional(),
});
export type SiteDiagnosis = z.infer<typeof SiteDiagnosis>;
