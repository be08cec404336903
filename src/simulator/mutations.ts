/**
 * Test-time changes to the generated data, kept as small overlays keyed by ID: the generated
 * world stays stateless and `clear()` returns to it.
 */
import { decodePromptTaskId, decodeSourceId } from './ids.ts';

/** Key of a (platform task, day): the prompt_task_id without k. */
export function taskDayKey(ordinal: number, day: number): number {
  return ordinal * 32_768 + day;
}

/** The children an execution's own endpoints serve (prompt/... and the legacy task/... forms). */
export type ExecutionChild = 'detail' | 'result' | 'sources' | 'screenshot' | 'products';
/** The children that can be served invalid (corruptChild). */
export type CorruptibleChild = 'sources' | 'screenshot' | 'products';

export class Overlay {
  readonly answers = new Map<number, string | null>();
  /** Executions listed without a screenshot whose screenshot has since been taken. */
  readonly lateScreenshots = new Set<number>();
  /** Executions made to have no screenshot (dropScreenshot). */
  readonly noScreenshots = new Set<number>();
  /** project_id -> the monitoring task's new name. */
  readonly names = new Map<number, string>();
  readonly deleted = new Set<number>();
  readonly corrupted = new Set<number>();
  /** prompt_task_id -> removed source indexes. */
  readonly removedSources = new Map<number, Set<number>>();
  /** source_ids served on prompt/searches with a wrong-typed known field (one bad list item). */
  readonly corruptSources = new Set<number>();
  /** prompt_task_id -> children served with a wrong-typed known field. */
  readonly corruptChildren = new Map<number, Set<CorruptibleChild>>();
  /** prompt_task_id -> children whose endpoints answer 404 although the execution is listed. */
  readonly hiddenChildren = new Map<number, Set<ExecutionChild>>();
  /** Monitoring tasks still listed whose project/tasks answers 404 (deleted between list and read). */
  readonly hiddenMonitoringTasks = new Set<number>();
  /** Platform tasks served by project/tasks and task/info with a wrong-typed known field. */
  readonly corruptPlatformTasks = new Set<number>();
  /** (ordinal, day) -> k that moves to the head of its list once a task/results page is served. */
  readonly headArmed = new Map<number, number>();
  /** (ordinal, day) -> k listed first (moved there between two pages). */
  readonly headMoved = new Map<number, number>();
  /** (ordinal, day) -> an execution saved again (and moved last) once a task/results page is served. */
  readonly resaveArmed = new Map<number, { k: number; promptTaskId: number; answer: string }>();
  /** (ordinal, day) -> k listed last (saved again between two pages, in a list ordered by save time). */
  readonly tailMoved = new Map<number, number>();
  /** Executions whose rank_details lost their last item (saved again with one brand fewer). */
  readonly droppedRank = new Set<number>();
  /** (ordinal, day) -> deleted k, so a list with no deletion stays a plain index range. */
  private readonly deletedByTaskDay = new Map<number, Set<number>>();

  clear(): void {
    this.answers.clear();
    this.lateScreenshots.clear();
    this.noScreenshots.clear();
    this.names.clear();
    this.deleted.clear();
    this.corrupted.clear();
    this.removedSources.clear();
    this.deletedByTaskDay.clear();
    this.corruptChildren.clear();
    this.corruptSources.clear();
    this.hiddenChildren.clear();
    this.hiddenMonitoringTasks.clear();
    this.corruptPlatformTasks.clear();
    this.headArmed.clear();
    this.headMoved.clear();
    this.resaveArmed.clear();
    this.tailMoved.clear();
    this.droppedRank.clear();
  }

  delete(promptTaskId: number): void {
    const c = decodePromptTaskId(promptTaskId);
    if (!c) return;
    this.deleted.add(promptTaskId);
    const key = taskDayKey(c.ordinal, c.day);
    const set = this.deletedByTaskDay.get(key) ?? new Set<number>();
    set.add(c.k);
    this.deletedByTaskDay.set(key, set);
  }

  addChild<C>(map: Map<number, Set<C>>, promptTaskId: number, child: C): void {
    const set = map.get(promptTaskId) ?? new Set<C>();
    set.add(child);
    map.set(promptTaskId, set);
  }

  deletedKs(ordinal: number, day: number): ReadonlySet<number> | undefined {
    return this.deletedByTaskDay.get(taskDayKey(ordinal, day));
  }

  removeSource(sourceId: number): void {
    const s = decodeSourceId(sourceId);
    if (!s) return;
    const set = this.removedSources.get(s.promptTaskId) ?? new Set<number>();
    set.add(s.index);
    this.removedSources.set(s.promptTaskId, set);
  }
}
