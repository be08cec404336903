/**
 * Site diagnosis per page project (spec 2.9, 3.1). A record stores only when it was created, on
 * which URL, and whether it will fail; its state is a pure function of the clock:
 *
 *   elapsed < 1 step  -> queued
 *   steps 1..3        -> running (progress 25/50/75, current_step changes)
 *   from step 4       -> completed (result_ready) or failed (with `error`)
 *
 * so GET never triggers anything (3.1 rule 1) and an injected clock drives every transition.
 * POST follows the table of 3.1; the history of each project is kept.
 */
import type { z } from 'zod';
import type { SiteDiagnosis } from '../api/schemas/diagnosis.ts';
import type { Catalog, CustomerDef } from './catalog.ts';
import {
  DIAGNOSIS_ERRORS,
  DIAGNOSIS_ISSUES,
  DIAGNOSIS_MODULES,
  DIAGNOSIS_STEPS,
  DIAGNOSIS_WINS,
} from './corpus.ts';
import { PLATFORM_KEYS } from './platforms.ts';
import { Rng, hash32, tag, unit } from './rng.ts';
import { shanghaiIso } from './time.ts';

export type SiteDiagnosisWire = z.input<typeof SiteDiagnosis>;
export type DiagnosisState = 'queued' | 'running' | 'completed' | 'failed';

const RUNNING_STEPS = 3;

interface DiagnosisRecord {
  diagnosis_id: number;
  diagnosis_task_id: string;
  customer_id: number;
  url: string;
  createdAt: number;
  fails: boolean;
}

export interface DiagnosisOptions {
  seed: number;
  now: () => Date;
  stepMs: number;
  /** Share (0..1) of new diagnoses that end failed, decided per diagnosis_id from the seed. */
  failureRate: number;
}

export class DiagnosisStore {
  private history = new Map<number, DiagnosisRecord[]>();
  private nextId = 0;
  private readonly firstId: number;

  constructor(
    private readonly catalog: Catalog,
    private readonly opts: DiagnosisOptions,
  ) {
    this.firstId = Rng.of(opts.seed, tag('diagnosis-ids')).int(3_000, 9_000);
    this.reset();
  }

  /**
   * Seeded starting point: the first readable project was never diagnosed, the second has an
   * old failure then a completed report, the third a completed report on its previous URL
   * (is_current_url false); the unreadable one has a report nobody may read.
   */
  reset(): void {
    this.history = new Map();
    this.nextId = this.firstId;
    const now = this.opts.now().getTime();
    const day = 86_400_000;
    const readable = this.catalog.readableCustomers();
    const add = (c: CustomerDef | undefined, url: string | null, ageMs: number, fails: boolean) => {
      if (c) this.add(c, url ?? c.url, now - ageMs, fails);
    };
    const second = readable[1];
    add(second, null, 5 * day, true);
    add(second, null, 2 * day, false);
    const moved = readable.find((c) => c.previousUrl !== null);
    add(moved, moved?.previousUrl ?? null, 3 * day, false);
    add(
      this.catalog.customers.find((c) => !c.readable),
      null,
      4 * day,
      false,
    );
  }

  private add(c: CustomerDef, url: string, createdAt: number, fails: boolean): DiagnosisRecord {
    const id = this.nextId++;
    const rec: DiagnosisRecord = {
      diagnosis_id: id,
      diagnosis_task_id: `sd-${Rng.of(this.opts.seed, tag('diagnosis-task'), id).hex(16)}`,
      customer_id: c.customer_id,
      url,
      createdAt,
      fails,
    };
    const list = this.history.get(c.customer_id) ?? [];
    list.push(rec);
    this.history.set(c.customer_id, list);
    return rec;
  }

  private stateOf(rec: DiagnosisRecord, now: number): { state: DiagnosisState; step: number } {
    const step = Math.max(0, Math.floor((now - rec.createdAt) / this.opts.stepMs));
    if (step === 0) return { state: 'queued', step };
    if (step <= RUNNING_STEPS) return { state: 'running', step };
    return { state: rec.fails ? 'failed' : 'completed', step };
  }

  /** GET: the latest diagnosis of a project, or not_started. Never changes anything. */
  get(c: CustomerDef): SiteDiagnosisWire {
    const list = this.history.get(c.customer_id);
    const latest = list?.[list.length - 1];
    return latest ? this.view(c, latest) : notStarted(c);
  }

  /** POST per the table of spec 3.1. */
  post(c: CustomerDef, forceRefresh: boolean): { created: boolean; data: SiteDiagnosisWire } {
    const now = this.opts.now().getTime();
    const list = this.history.get(c.customer_id);
    const latest = list?.[list.length - 1];
    let create = !latest;
    if (latest) {
      const { state } = this.stateOf(latest, now);
      if (state === 'failed') create = true;
      else if (latest.url !== c.url)
        create = true; // the project URL changed: re-diagnose
      else if (forceRefresh && state === 'completed') create = true;
      // queued/running (with or without force_refresh) and completed without it: reuse.
    }
    const rec = create
      ? this.add(
          c,
          c.url,
          now,
          unit(hash32(this.opts.seed, tag('diagnosis-fail'), this.nextId)) < this.opts.failureRate,
        )
      : (latest as DiagnosisRecord);
    return { created: create, data: { ...this.view(c, rec), created: create } };
  }

  /** Every diagnosis of a project, oldest first, as GET would show each. */
  all(c: CustomerDef): SiteDiagnosisWire[] {
    return (this.history.get(c.customer_id) ?? []).map((r) => this.view(c, r));
  }

  private view(c: CustomerDef, rec: DiagnosisRecord): SiteDiagnosisWire {
    const now = this.opts.now().getTime();
    const { state, step } = this.stateOf(rec, now);
    const updated = rec.createdAt + Math.min(step, RUNNING_STEPS + 1) * this.opts.stepMs;
    const out: SiteDiagnosisWire = {
      status: state,
      diagnosis_id: rec.diagnosis_id,
      diagnosis_task_id: rec.diagnosis_task_id,
      result_ready: state === 'completed',
      progress_percent:
        state === 'running' ? step * 25 : state === 'completed' ? 100 : state === 'queued' ? 0 : null,
      current_step: state === 'running' ? (DIAGNOSIS_STEPS[step - 1] ?? null) : null,
      project_url: c.url,
      url: rec.url,
      is_current_url: rec.url === c.url,
      result: state === 'completed' ? report(this.opts.seed, rec) : null,
      created_at: shanghaiIso(rec.createdAt),
      updated_at: shanghaiIso(updated),
    };
    if (state === 'failed') {
      const rng = Rng.of(this.opts.seed, tag('diagnosis-error'), rec.diagnosis_id);
      out.error = { code: 'DIAGNOSIS_FAILED', message: rng.pick(DIAGNOSIS_ERRORS) };
    }
    return out;
  }
}

function notStarted(c: CustomerDef): SiteDiagnosisWire {
  return {
    status: 'not_started',
    diagnosis_id: null,
    diagnosis_task_id: null,
    result_ready: false,
    progress_percent: null,
    current_step: null,
    project_url: c.url,
    url: null,
    is_current_url: null,
    result: null,
  };
}

/**
 * The report: its members' inner structure is "not shown" (spec 2.9), so a plausible one.
 * Missing content stays empty and scores are never invented: some reports have no platform
 * scores and no composite score.
 */
function report(seed: number, rec: DiagnosisRecord): Record<string, unknown> {
  const rng = Rng.of(seed, tag('diagnosis-report'), rec.diagnosis_id);
  const partial = rng.chance(0.2);
  const modules: Record<string, { score: number; status: string }> = {};
  for (const m of DIAGNOSIS_MODULES) {
    const score = rng.int(35, 98);
    modules[m] = { score, status: score >= 80 ? '良好' : score >= 60 ? '一般' : '待改进' };
  }
  const platform_scores: Record<string, number> = {};
  if (!partial) for (const k of rng.sample(PLATFORM_KEYS, 5)) platform_scores[k] = rng.int(20, 95);
  const issues = rng.sample(DIAGNOSIS_ISSUES, rng.int(2, 4)).map((title, i) => ({
    title,
    severity: i === 0 ? 'high' : rng.pick(['medium', 'low']),
    affected_pages: rng.int(1, 40),
  }));
  const composite = partial
    ? null
    : Math.round((Object.values(modules).reduce((a, m) => a + m.score, 0) / DIAGNOSIS_MODULES.length) * 10) /
      10;
  const members = {
    composite_score: composite,
    summary_text: `站点 ${rec.url} 在AI搜索中的可见性${composite !== null && composite >= 70 ? '较好' : '有待提升'}，主要问题集中在${issues[0]?.title ?? '内容结构'}。`,
    top_issues: issues,
    quick_wins: rng.sample(DIAGNOSIS_WINS, rng.int(1, 3)),
    modules_summary: modules,
    platform_scores,
    observation: partial
      ? {}
      : {
          crawled_pages: rng.int(20, 400),
          ai_mentions: rng.int(0, 120),
          checked_at: shanghaiIso(rec.createdAt),
        },
    page_diagnostics: Array.from({ length: rng.int(1, 4) }, (_, i) => ({
      url: i === 0 ? rec.url : `${rec.url}page-${i}.html`,
      score: rng.int(30, 95),
      issues: rng.sample(DIAGNOSIS_ISSUES, rng.int(0, 2)),
    })),
  };
  return { ...members, result_json: { version: '1.0', url: rec.url, ...members } };
}
