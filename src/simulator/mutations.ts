/**
 * Test-time changes to the generated data, kept as small overlays keyed by ID: the generated
 * world stays stateless and `clear()` returns to it.
 */
import { decodePromptTaskId, decodeSourceId } from './ids.ts';

/** Key of a (platform task, day): the prompt_task_id without k. */
export function taskDayKey(ordinal: number, day: number): number {
  return ordinal * 32_768 + day;
}

export class Overlay {
  readonly answers = new Map<number, string | null>();
  readonly deleted = new Set<number>();
  readonly corrupted = new Set<number>();
  /** prompt_task_id -> removed source indexes. */
  readonly removedSources = new Map<number, Set<number>>();
  /** (ordinal, day) -> deleted k, so a list with no deletion stays a plain index range. */
  private readonly deletedByTaskDay = new Map<number, Set<number>>();

  clear(): void {
    this.answers.clear();
    this.deleted.clear();
    this.corrupted.clear();
    this.removedSources.clear();
    this.deletedByTaskDay.clear();
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
