/**
 * The simulated world and its ground truth. The server serves exactly what these methods
 * return, so tests can compare a warehouse with them. Small things (catalog, ledger) are built
 * once; executions and their children are generated on demand from their IDs (executions.ts).
 */
import type { MonitoringTaskDef, PlatformTaskDef } from './catalog.ts';
import { Catalog } from './catalog.ts';
import type { ProductSet, SourceRecord } from './children.ts';
import { productsOf, screenshotOf, sourcesOf, toSource } from './children.ts';
import { dayTotalsOf } from './day-totals.ts';
import type { SiteDiagnosisWire } from './diagnosis.ts';
import { DiagnosisStore } from './diagnosis.ts';
import type { ExecRef, WirePromptExecution, WirePromptResultItem } from './executions.ts';
import { ExecutionModel, executionOf, resultItemOf, sourceCount } from './executions.ts';
import type { BalanceWire, DeductionWire } from './finance.ts';
import { Finance } from './finance.ts';
import { decodePromptTaskId } from './ids.ts';
import { Overlay, taskDayKey, type CorruptibleChild, type ExecutionChild } from './mutations.ts';
import { STATUS_NAMES } from './platforms.ts';
import { dayNumber, shanghaiDateTime, todayNumber, ymdOfDay } from './time.ts';
import { worldMutations } from './world-mutations.ts';
import type {
  DayTotals,
  LegacyMonitoringTaskDetailWire,
  LegacyMonitoringTaskWire,
  MonitoringTaskWire,
  PlatformTaskWire,
  ScreenshotWire,
  SourceWire,
  UserWire,
  World,
  WorldMutations,
  WorldOptions,
} from './world-types.ts';

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
    this.model = new ExecutionModel(opts.seed + opts.drawShift, this.catalog, opts.executionsPerDay);
    this.finance = new Finance(opts.seed, this.catalog, this.model);
    this.diagnosis = new DiagnosisStore(this.catalog, {
      seed: opts.seed,
      now: opts.now,
      stepMs: opts.diagnosisStepMs,
      failureRate: opts.diagnosisFailureRate,
    });
    this.mutations = worldMutations(this);
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
    const view: PlatformTaskWire = {
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
    // A wrong-typed known field (corruptPlatformTask): the wire type does not allow it, on purpose.
    if (this.overlay.corruptPlatformTasks.has(pt.task_id))
      return { ...view, status: 'abc' as unknown as number };
    return view;
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

  /** A reference with the overlay's per-execution flags (a late screenshot, none at all). */
  private marked(ref: ExecRef): ExecRef {
    if (this.overlay.lateScreenshots.size > 0 && this.overlay.lateScreenshots.has(ref.prompt_task_id))
      ref.lateScreenshot = true;
    if (this.overlay.noScreenshots.size > 0 && this.overlay.noScreenshots.has(ref.prompt_task_id))
      ref.noScreenshot = true;
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

  /** resolve, or a RangeError naming the ID (the mutations' check that what they name exists). */
  mustResolve(promptTaskId: number): ExecRef {
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

  /** Totals of a day over every readable platform task (day-totals.ts). */
  dayTotals(date: string): DayTotals {
    return dayTotalsOf(this, date);
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
