/**
 * The simulated world and its ground truth. The server serves exactly what these methods
 * return, so tests can compare a warehouse with them. Small things (catalog, ledger) are built
 * once; executions and their children are generated on demand from their IDs (executions.ts).
 */
import type { z } from 'zod';
import type { User } from '../api/schemas/account.ts';
import type { MonitoringTask, PlatformTask, Screenshot, Source } from '../api/schemas/hierarchical.ts';
import type { LegacyMonitoringTask, LegacyMonitoringTaskDetail } from '../api/schemas/legacy.ts';
import type { MonitoringTaskDef, PlatformTaskDef } from './catalog.ts';
import { Catalog } from './catalog.ts';
import type { ProductSet, SourceRecord } from './children.ts';
import { productsOf, screenshotOf, sourcesOf, toSource } from './children.ts';
import type { SiteDiagnosisWire } from './diagnosis.ts';
import { DiagnosisStore } from './diagnosis.ts';
import type { ExecRef, WirePromptExecution, WirePromptResultItem } from './executions.ts';
import {
  ExecutionModel,
  cardCount,
  executionOf,
  hasScreenshot,
  isMissing,
  rankCount,
  resultItemOf,
  screenshotUrl,
  sourceCount,
} from './executions.ts';
import type { BalanceWire, DeductionWire } from './finance.ts';
import { Finance } from './finance.ts';
import { decodePromptTaskId, decodeSourceId } from './ids.ts';
import { Overlay, taskDayKey, type CorruptibleChild, type ExecutionChild } from './mutations.ts';
import { STATUS_NAMES } from './platforms.ts';
import { hash2 } from './rng.ts';
import { dayNumber, shanghaiDateTime, todayNumber, ymdOfDay } from './time.ts';

export type MonitoringTaskWire = z.input<typeof MonitoringTask>;
export type PlatformTaskWire = z.input<typeof PlatformTask>;
export type SourceWire = z.input<typeof Source>;
export type ScreenshotWire = z.input<typeof Screenshot>;
export type UserWire = z.input<typeof User>;
export type LegacyMonitoringTaskWire = z.input<typeof LegacyMonitoringTask>;
export type LegacyMonitoringTaskDetailWire = z.input<typeof LegacyMonitoringTaskDetail>;
export type {
  ProductSet,
  SiteDiagnosisWire,
  DeductionWire,
  BalanceWire,
  WirePromptExecution,
  WirePromptResultItem,
};

export interface DayTotals {
  /** Readable platform tasks (the (task, day) units of that day), historical and created included. */
  platformTasks: number;
  /** Readable platform tasks with at least one execution that day. */
  platformTasksWithExecutions: number;
  executions: number;
  /** rank_details items (valid or not). */
  ranks: number;
  sources: number;
  productCards: number;
  /** Executions with a screenshot (prompt/screenshot answers an empty `screenshot_url` for the others). */
  screenshots: number;
  /** Executions with result_status missing. */
  missingResults: number;
  /** Executions served with a wrong-typed field (corruptExecution): counted in `executions` too. */
  corruptedExecutions: number;
}

export interface WorldMutations {
  /** A string replaces the answer; null makes result_status missing (answer/think null). */
  setAnswer(promptTaskId: number, answer: string | null): void;
  removeSource(sourceId: number): void;
  /** Gone from lists; 404 on the single-execution endpoints. */
  deleteExecution(promptTaskId: number): void;
  /** Served in task/results and task/prompts with `hours: "abc"`. */
  corruptExecution(promptTaskId: number): void;
  /**
   * This child's endpoint (prompt/searches, prompt/screenshot or prompt/products) answers 200 with
   * a known field of the wrong type: a permanent, not retryable mismatch.
   */
  corruptChild(promptTaskId: number, child: CorruptibleChild): void;
  /**
   * This one source is served by prompt/searches with a known field of the wrong type; the other
   * items of the list, and its `total`, are as before (a client quarantines that one item).
   */
  corruptSource(sourceId: number): void;
  /**
   * The execution stays listed by task/results and task/prompts, but this child's endpoints
   * (hierarchical and legacy forms) answer 404.
   */
  hideChild(promptTaskId: number, child: ExecutionChild): void;
  /**
   * The monitoring task stays listed (customer/projects, legacy project/list) but its
   * project/tasks answers 404, as for one deleted between the listing and the read.
   */
  hideMonitoringTask(projectId: number): void;
  /**
   * Offset paging under a changing list: once the next task/results page of the execution's unit
   * has been served, the execution moves to the head of the unit's list (task/results,
   * task/prompts, legacy task/list), as if it were inserted there between two pages.
   */
  moveToHeadBetweenPages(promptTaskId: number): void;
  /**
   * An answer saved again while a client pages: once the next task/results page of the
   * execution's unit has been served, its answer becomes `answer`, its rank_details lose their
   * last item, and it moves to the end of the unit's lists (task/results, task/prompts, legacy
   * task/list), as in a list ordered by save time. Offset paging then lists it twice, the second
   * time updated (and skips the execution that moved up into the page already served).
   */
  resaveBetweenPages(promptTaskId: number, answer: string): void;
  /**
   * A screenshot taken late: an execution listed without one now has it, in its listed item
   * (`screenshot_url`) and on prompt/screenshot. Returns false when it already had one.
   */
  takeScreenshot(promptTaskId: number): boolean;
  /** The monitoring task is renamed (customer/projects `project_name`, legacy `brand_name`). */
  renameMonitoringTask(projectId: number, name: string): void;
  /** Drop every mutation, and legacy creates/edits. */
  reset(): void;
}

export interface World {
  readonly seed: number;
  readonly user: UserWire;
  readonly unreadableCustomerId: number;
  /** Monitoring / platform tasks of the unreadable project: they exist, every read gives 404. */
  readonly unreadableMonitoringTaskIds: number[];
  readonly unreadablePlatformTaskIds: number[];
  readonly mutations: WorldMutations;
  dates(): string[];
  customerIds(): number[];
  monitoringTasks(customerId: number): MonitoringTaskWire[];
  historicalMonitoringTasks(): MonitoringTaskWire[];
  platformTasks(monitoringTaskId: number): PlatformTaskWire[];
  allPlatformTasks(): PlatformTaskWire[];
  executions(taskId: number, date: string): Iterable<WirePromptResultItem>;
  sources(promptTaskId: number): SourceWire[];
  products(promptTaskId: number): ProductSet;
  screenshot(promptTaskId: number): ScreenshotWire | null;
  dayTotals(date: string): DayTotals;
  deductions(): DeductionWire[];
  balance(): BalanceWire;
  diagnoses(customerId: number): SiteDiagnosisWire[];
  resetDiagnoses(): void;
}

export interface WorldOptions {
  seed: number;
  days: number;
  executionsPerDay: number;
  now: () => Date;
  diagnosisStepMs: number;
  diagnosisFailureRate: number;
  email: string;
}

export class SimWorld implements World {
  readonly seed: number;
  readonly catalog: Catalog;
  readonly model: ExecutionModel;
  readonly overlay = new Overlay();
  readonly diagnosis: DiagnosisStore;
  readonly finance: Finance;
  readonly mutations: WorldMutations;
  readonly now: () => Date;
  private readonly days: number;
  private lastLogin: string | null = null;

  constructor(opts: WorldOptions) {
    this.seed = opts.seed;
    this.days = opts.days;
    this.now = opts.now;
    this.catalog = new Catalog({ seed: opts.seed, email: opts.email });
    this.model = new ExecutionModel(opts.seed, this.catalog, opts.executionsPerDay);
    this.finance = new Finance(opts.seed, this.catalog, this.model);
    this.diagnosis = new DiagnosisStore(this.catalog, {
      seed: opts.seed,
      now: opts.now,
      stepMs: opts.diagnosisStepMs,
      failureRate: opts.diagnosisFailureRate,
    });
    this.mutations = {
      setAnswer: (id, answer) => {
        this.mustResolve(id);
        this.overlay.answers.set(id, answer);
      },
      removeSource: (sourceId) => {
        const s = decodeSourceId(sourceId);
        const ref = s ? this.resolve(s.promptTaskId) : null;
        if (!s || !ref || s.index >= sourceCount(ref.h, ref.pt.ordinal, ref.k))
          throw new RangeError(`unknown source_id ${sourceId}`);
        this.overlay.removeSource(sourceId);
      },
      deleteExecution: (id) => {
        this.mustResolve(id);
        this.overlay.delete(id);
      },
      corruptExecution: (id) => {
        this.mustResolve(id);
        this.overlay.corrupted.add(id);
      },
      corruptChild: (id, child) => {
        this.mustResolve(id);
        this.overlay.addChild(this.overlay.corruptChildren, id, child);
      },
      corruptSource: (sourceId) => {
        const s = decodeSourceId(sourceId);
        const ref = s ? this.resolve(s.promptTaskId) : null;
        if (!s || !ref || s.index >= sourceCount(ref.h, ref.pt.ordinal, ref.k))
          throw new RangeError(`unknown source_id ${sourceId}`);
        this.overlay.corruptSources.add(sourceId);
      },
      hideChild: (id, child) => {
        this.mustResolve(id);
        this.overlay.addChild(this.overlay.hiddenChildren, id, child);
      },
      hideMonitoringTask: (projectId) => {
        if (!this.catalog.monitoringTask(projectId)) throw new Error(`no monitoring task ${projectId}`);
        this.overlay.hiddenMonitoringTasks.add(projectId);
      },
      moveToHeadBetweenPages: (id) => {
        const ref = this.mustResolve(id);
        this.overlay.headArmed.set(taskDayKey(ref.pt.ordinal, ref.day), ref.k);
      },
      resaveBetweenPages: (id, answer) => {
        const ref = this.mustResolve(id);
        this.overlay.resaveArmed.set(taskDayKey(ref.pt.ordinal, ref.day), {
          k: ref.k,
          promptTaskId: id,
          answer,
        });
      },
      takeScreenshot: (id) => {
        const ref = this.mustResolve(id);
        if (screenshotUrl(ref) !== null) return false;
        this.overlay.lateScreenshots.add(id);
        return true;
      },
      renameMonitoringTask: (projectId, name) => {
        if (!this.catalog.monitoringTask(projectId)) throw new Error(`no monitoring task ${projectId}`);
        this.overlay.names.set(projectId, name);
      },
      reset: () => {
        this.overlay.clear();
        this.catalog.resetOverlays();
      },
    };
  }

  // --- time ------------------------------------------------------------------------------------

  today(): number {
    return todayNumber(this.now());
  }

  /** [first, last] day numbers of the history: `days` days ending yesterday. */
  historyRange(): [number, number] {
    const last = this.today() - 1;
    return [last - this.days + 1, last];
  }

  inHistory(day: number): boolean {
    const [first, last] = this.historyRange();
    return day >= first && day <= last;
  }

  dates(): string[] {
    const [first, last] = this.historyRange();
    const out: string[] = [];
    for (let d = first; d <= last; d++) out.push(ymdOfDay(d));
    return out;
  }

  // --- account ---------------------------------------------------------------------------------

  get user(): UserWire {
    const u = this.catalog.user;
    return {
      id: u.id,
      name: u.name,
      email: u.email,
      uuid: u.uuid,
      last_login_time: this.lastLogin ?? u.created_at,
      amount: this.balance().amount,
      block_reason: null,
      created_at: u.created_at,
    };
  }

  noteLogin(): void {
    this.lastLogin = shanghaiDateTime(this.now());
  }

  deductions(): DeductionWire[] {
    const [first, last] = this.historyRange();
    return this.finance.ledger(first, last).records.slice();
  }

  balance(): BalanceWire {
    const [first, last] = this.historyRange();
    const u = this.catalog.user;
    return { amount: this.finance.ledger(first, last).balanceCents / 100, user_id: u.id, user_name: u.name };
  }

  // --- catalog views ---------------------------------------------------------------------------

  get unreadableCustomerId(): number {
    const c = this.catalog.customers.find((x) => !x.readable);
    if (!c) throw new Error('no unreadable customer');
    return c.customer_id;
  }

  get unreadableMonitoringTaskIds(): number[] {
    return this.catalog
      .allMonitoringTasks()
      .filter((m) => !m.readable)
      .map((m) => m.project_id);
  }

  get unreadablePlatformTaskIds(): number[] {
    return this.unreadableMonitoringTaskIds.flatMap((id) =>
      this.catalog.platformTasksOf(id).map((p) => p.task_id),
    );
  }

  customerIds(): number[] {
    return this.catalog.readableCustomers().map((c) => c.customer_id);
  }

  /** Readable monitoring tasks of a page project (empty for unknown or unreadable ones). */
  monitoringTaskDefs(customerId: number): MonitoringTaskDef[] {
    return this.catalog
      .allMonitoringTasks()
      .filter((m) => m.readable && m.customer_id === customerId)
      .sort((a, b) => a.project_id - b.project_id);
  }

  monitoringTasks(customerId: number): MonitoringTaskWire[] {
    return this.monitoringTaskDefs(customerId).map((m) => this.monitoringTaskView(m));
  }

  historicalMonitoringTasks(): MonitoringTaskWire[] {
    return this.catalog
      .allMonitoringTasks()
      .filter((m) => m.readable && m.customer_id === null && !m.createdByApi)
      .map((m) => this.monitoringTaskView(m));
  }

  /** Every monitoring task the key may read: projects', historical and created ones. */
  readableMonitoringTaskDefs(): MonitoringTaskDef[] {
    return this.catalog.allMonitoringTasks().filter((m) => m.readable);
  }

  platformTasks(monitoringTaskId: number): PlatformTaskWire[] {
    const mt = this.catalog.monitoringTask(monitoringTaskId);
    if (!mt || !mt.readable) return [];
    return this.catalog.platformTasksOf(mt.project_id).map((p) => this.platformTaskView(p));
  }

  allPlatformTasks(): PlatformTaskWire[] {
    return this.readableMonitoringTaskDefs().flatMap((m) =>
      this.catalog.platformTasksOf(m.project_id).map((p) => this.platformTaskView(p)),
    );
  }

  monitoringTaskView(mt: MonitoringTaskDef): MonitoringTaskWire {
    const cfg = this.catalog.config(mt);
    return {
      customer_id: mt.customer_id,
      project_id: mt.project_id,
      project_name: this.overlay.names.get(mt.project_id) ?? mt.project_name,
      brand_cate_desc: mt.brand_cate_desc,
      brand_desc_list: cfg.brand_desc_list,
      status: mt.status,
      status_name: STATUS_NAMES[mt.status] ?? '',
      created_at: mt.created_at,
      task_count: this.catalog.platformTasksOf(mt.project_id).length,
      prompts: cfg.prompts.slice(),
    };
  }

  platformTaskView(pt: PlatformTaskDef): PlatformTaskWire {
    const status = this.catalog.taskStatus(pt);
    return {
      customer_id: pt.mt.customer_id,
      project_id: pt.mt.project_id,
      task_id: pt.task_id,
      task_name: `${pt.mt.project_name}-${pt.platform.model_name}`,
      model_key: pt.platform.key,
      model_name: pt.platform.model_name,
      engine: pt.platform.engine,
      status,
      status_name: STATUS_NAMES[status] ?? '',
    };
  }

  legacyItem(mt: MonitoringTaskDef): LegacyMonitoringTaskWire {
    const cfg = this.catalog.config(mt);
    return {
      number_id: mt.project_id,
      brand_name: this.overlay.names.get(mt.project_id) ?? mt.project_name,
      brand_cate_desc: mt.brand_cate_desc,
      brand_desc_list: cfg.brand_desc_list,
      status: mt.status,
      status_name: STATUS_NAMES[mt.status] ?? '',
      created_at: mt.created_at,
      projects: this.catalog.platformTasksOf(mt.project_id).map((p) => ({
        project_id: p.task_id,
        model_key: p.platform.key,
        model_name: p.platform.model_name,
      })),
      prompts: cfg.prompts.slice(),
    };
  }

  legacyDetail(mt: MonitoringTaskDef): LegacyMonitoringTaskDetailWire {
    const cfg = this.catalog.config(mt);
    const base = this.legacyItem(mt);
    return {
      ...base,
      week_restart: cfg.week_restart,
      only_rank: cfg.only_rank,
      rank_match: cfg.rank_match,
      brand_urls: mt.brand_urls.slice(),
      emails: mt.emails.slice(),
      projects: this.catalog.platformTasksOf(mt.project_id).map((p) => ({
        project_id: p.task_id,
        model_key: p.platform.key,
        model_name: p.platform.model_name,
        prompts: cfg.prompts.slice(),
      })),
    };
  }

  /** A readable platform task, or undefined (unknown or not readable: 404). */
  readablePlatformTask(taskId: number): PlatformTaskDef | undefined {
    const pt = this.catalog.platformTask(taskId);
    return pt && pt.readable ? pt : undefined;
  }

  // --- executions ------------------------------------------------------------------------------

  /** Visible executions of a (platform task, day): count and the k of the i-th one. */
  visible(pt: PlatformTaskDef, day: number): { count: number; kAt: (i: number) => number } {
    const n = this.inHistory(day) ? this.model.count(pt, day) : 0;
    const deleted = pt.ordinal > 0 ? this.overlay.deletedKs(pt.ordinal, day) : undefined;
    const key = taskDayKey(pt.ordinal, day);
    const head = this.overlay.headMoved.size > 0 ? this.overlay.headMoved.get(key) : undefined;
    const tail = this.overlay.tailMoved.size > 0 ? this.overlay.tailMoved.get(key) : undefined;
    if ((!deleted || deleted.size === 0) && head === undefined && tail === undefined)
      return { count: n, kAt: (i) => i };
    const ks: number[] = [];
    for (let k = 0; k < n; k++) if (!deleted?.has(k) && k !== head && k !== tail) ks.push(k);
    if (head !== undefined && head < n && !deleted?.has(head)) ks.unshift(head);
    if (tail !== undefined && tail !== head && tail < n && !deleted?.has(tail)) ks.push(tail);
    return { count: ks.length, kAt: (i) => ks[i] as number };
  }

  /** References of visible executions [offset, offset + limit) of a (platform task, day). */
  refs(pt: PlatformTaskDef, day: number, offset = 0, limit = Number.POSITIVE_INFINITY): ExecRef[] {
    const v = this.visible(pt, day);
    const end = Math.min(v.count, offset + limit);
    const tdh = this.model.taskDayHash(pt.ordinal, day);
    const out: ExecRef[] = [];
    for (let i = Math.max(0, offset); i < end; i++)
      out.push(this.marked(this.model.ref(pt, day, v.kAt(i), tdh)));
    return out;
  }

  /** A reference with the overlay's per-execution flags (a late screenshot). */
  private marked(ref: ExecRef): ExecRef {
    if (this.overlay.lateScreenshots.size > 0 && this.overlay.lateScreenshots.has(ref.prompt_task_id))
      ref.lateScreenshot = true;
    return ref;
  }

  /** The execution of a prompt_task_id if it exists, is readable, in history and not deleted. */
  resolve(promptTaskId: number): ExecRef | null {
    const c = decodePromptTaskId(promptTaskId);
    if (!c) return null;
    const pt = this.catalog.executing[c.ordinal - 1];
    if (!pt || !pt.readable || !this.inHistory(c.day)) return null;
    if (c.k >= this.model.count(pt, c.day) || this.overlay.deleted.has(promptTaskId)) return null;
    return this.marked(this.model.ref(pt, c.day, c.k));
  }

  private mustResolve(promptTaskId: number): ExecRef {
    const ref = this.resolve(promptTaskId);
    if (!ref) throw new RangeError(`unknown or deleted prompt_task_id ${promptTaskId}`);
    return ref;
  }

  resultItem(ref: ExecRef): WirePromptResultItem {
    const o = this.overlay;
    const id = ref.prompt_task_id;
    if (!o.answers.has(id) && !o.droppedRank.has(id)) return resultItemOf(ref);
    return resultItemOf(ref, {
      ...(o.answers.has(id) ? { answer: o.answers.get(id) ?? null } : {}),
      ...(o.droppedRank.has(id) ? { dropLastRanks: 1 } : {}),
    });
  }

  executionItem(ref: ExecRef): WirePromptExecution {
    return executionOf(ref);
  }

  /** corruptChild: whether this child of the execution is served invalid. */
  isChildCorrupted(promptTaskId: number, child: CorruptibleChild): boolean {
    return (
      this.overlay.corruptChildren.size > 0 &&
      Boolean(this.overlay.corruptChildren.get(promptTaskId)?.has(child))
    );
  }

  /** hideMonitoringTask: whether project/tasks answers 404 for this listed monitoring task. */
  isMonitoringTaskHidden(projectId: number): boolean {
    return this.overlay.hiddenMonitoringTasks.has(projectId);
  }

  /** hideChild: whether this child's endpoints answer 404 for a listed execution. */
  isChildHidden(promptTaskId: number, child: ExecutionChild): boolean {
    return (
      this.overlay.hiddenChildren.size > 0 &&
      Boolean(this.overlay.hiddenChildren.get(promptTaskId)?.has(child))
    );
  }

  /**
   * A task/results page of (pt, day) was served: an armed moveToHeadBetweenPages or
   * resaveBetweenPages takes effect.
   */
  notePageServed(pt: PlatformTaskDef, day: number): void {
    const o = this.overlay;
    if (o.headArmed.size === 0 && o.resaveArmed.size === 0) return;
    const key = taskDayKey(pt.ordinal, day);
    const k = o.headArmed.get(key);
    if (k !== undefined) {
      o.headArmed.delete(key);
      o.headMoved.set(key, k);
    }
    const resave = o.resaveArmed.get(key);
    if (resave !== undefined) {
      o.resaveArmed.delete(key);
      o.answers.set(resave.promptTaskId, resave.answer);
      o.droppedRank.add(resave.promptTaskId);
      o.tailMoved.set(key, resave.k);
    }
  }

  /** corruptSource: whether this source is served with a wrong-typed field. */
  isSourceCorrupted(sourceId: number): boolean {
    return this.overlay.corruptSources.size > 0 && this.overlay.corruptSources.has(sourceId);
  }

  isCorrupted(promptTaskId: number): boolean {
    return this.overlay.corrupted.size > 0 && this.overlay.corrupted.has(promptTaskId);
  }

  *executions(taskId: number, date: string): Iterable<WirePromptResultItem> {
    const pt = this.readablePlatformTask(taskId);
    const day = dayNumber(date);
    if (!pt || Number.isNaN(day)) return;
    const v = this.visible(pt, day);
    const tdh = this.model.taskDayHash(pt.ordinal, day);
    for (let i = 0; i < v.count; i++)
      yield this.resultItem(this.marked(this.model.ref(pt, day, v.kAt(i), tdh)));
  }

  /** Visible sources of an execution (removed ones left out), up to the first `upTo` visible. */
  sourceRecords(ref: ExecRef, upTo = Number.POSITIVE_INFINITY): SourceRecord[] {
    const removed = this.overlay.removedSources.get(ref.prompt_task_id);
    if (!removed || removed.size === 0) return sourcesOf(ref, upTo);
    return sourcesOf(ref)
      .filter((_, j) => !removed.has(j))
      .slice(0, upTo);
  }

  sourceTotal(ref: ExecRef): number {
    const n = sourceCount(ref.h, ref.pt.ordinal, ref.k);
    return n - (this.overlay.removedSources.get(ref.prompt_task_id)?.size ?? 0);
  }

  sources(promptTaskId: number): SourceWire[] {
    return this.sourceRecords(this.mustResolve(promptTaskId)).map((s) => toSource(s) as SourceWire);
  }

  products(promptTaskId: number): ProductSet {
    return productsOf(this.mustResolve(promptTaskId));
  }

  screenshot(promptTaskId: number): ScreenshotWire | null {
    const shot = screenshotOf(this.mustResolve(promptTaskId));
    return shot ? { ...shot } : null;
  }

  /** Totals of a day over every readable platform task: a loop of hashes, nothing kept. */
  dayTotals(date: string): DayTotals {
    const day = dayNumber(date);
    const t: DayTotals = {
      platformTasks: this.allPlatformTasks().length,
      platformTasksWithExecutions: 0,
      executions: 0,
      ranks: 0,
      sources: 0,
      productCards: 0,
      screenshots: 0,
      missingResults: 0,
      corruptedExecutions: 0,
    };
    if (Number.isNaN(day) || !this.inHistory(day)) return t;
    const o = this.overlay;
    for (const pt of this.catalog.executing) {
      const n = this.model.count(pt, day);
      const deleted = o.deletedKs(pt.ordinal, day);
      const tdh = this.model.taskDayHash(pt.ordinal, day);
      let seen = 0;
      for (let k = 0; k < n; k++) {
        if (deleted !== undefined && deleted.has(k)) continue;
        const h = hash2(tdh, k);
        seen++;
        t.ranks += rankCount(h, pt);
        t.sources += sourceCount(h, pt.ordinal, k);
        t.productCards += cardCount(h, pt);
        if (hasScreenshot(h)) t.screenshots++;
        if (isMissing(h)) t.missingResults++;
      }
      t.executions += seen;
      if (seen > 0) t.platformTasksWithExecutions++;
    }
    // Overlays are small: correct the totals by walking them, not the day.
    for (const [id, answer] of o.answers) {
      const ref = this.resolve(id);
      if (!ref || ref.day !== day) continue;
      const was = isMissing(ref.h);
      if (was && answer !== null) t.missingResults--;
      if (!was && answer === null) t.missingResults++;
    }
    for (const id of o.droppedRank) {
      const ref = this.resolve(id);
      if (ref && ref.day === day && rankCount(ref.h, ref.pt) > 0) t.ranks--;
    }
    for (const [id, removed] of o.removedSources) {
      const ref = this.resolve(id);
      if (ref && ref.day === day) t.sources -= removed.size;
    }
    for (const id of o.corrupted) {
      const ref = this.resolve(id);
      if (ref && ref.day === day) t.corruptedExecutions++;
    }
    return t;
  }

  // --- diagnosis -------------------------------------------------------------------------------

  diagnoses(customerId: number): SiteDiagnosisWire[] {
    const c = this.catalog.customer(customerId);
    return c ? this.diagnosis.all(c) : [];
  }

  resetDiagnoses(): void {
    this.diagnosis.reset();
  }
}
