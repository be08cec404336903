/**
 * Site diagnosis (spec 2.9, 3.1). Field types are "not shown beyond the names" (4.2 rule 4), so
 * IDs accept integers or strings, and everything but `status` is optional. The report members'
 * inner structure is not shown: they are kept as JSON.
 */
import { z } from 'zod';

export const DiagnosisStatus = z.enum(['not_started', 'queued', 'running', 'completed', 'failed']);
export type DiagnosisStatus = z.infer<typeof DiagnosisStatus>;

const IdLike = z.union([z.number().int(), z.string().min(1)]);

export const DiagnosisReport = z.looseObject({
  composite_score: z.number().nullable().optional(),
  summary_text: z.unknown().optional(),
  top_issues: z.unknown().optional(),
  quick_wins: z.unknown().optional(),
  modules_summary: z.unknown().optional(),
  platform_scores: z.unknown().optional(),
  observation: z.unknown().optional(),
  page_diagnostics: z.unknown().optional(),
  result_json: z.unknown().optional(),
});
export type DiagnosisReport = z.infer<typeof DiagnosisReport>;

export const SiteDiagnosis = z.looseObject({
  status: DiagnosisStatus,
  diagnosis_id: IdLike.nullable().optional(),
  diagnosis_task_id: IdLike.nullable().optional(),
  created: z.boolean().optional(),
  result_ready: z.boolean().optional(),
  progress_percent: z.number().nullable().optional(),
  current_step: z.string().nullable().optional(),
  error: z.unknown().optional(),
  project_url: z.string().nullable().optional(),
  url: z.string().nullable().optional(),
  is_current_url: z.boolean().nullable().optional(),
  result: DiagnosisReport.nullable().optional(),
});
export type SiteDiagnosis = z.infer<typeof SiteDiagnosis>;
