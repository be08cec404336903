/**
 * The world's mutations (WorldMutations): each checks that what it names exists, then records
 * the change in the overlay, which the world's reads consult.
 */
import type { Catalog } from './catalog.ts';
import { decodeSourceId } from './ids.ts';
import type { ExecRef } from './executions.ts';
import { hasScreenshot, screenshotUrl, sourceCount } from './executions.ts';
import { taskDayKey, type Overlay } from './mutations.ts';
import type { WorldMutations } from './world-types.ts';

/** What the mutations need of the world. */
export interface MutableWorld {
  readonly catalog: Catalog;
  readonly overlay: Overlay;
  resolve(promptTaskId: number): ExecRef | null;
  mustResolve(promptTaskId: number): ExecRef;
}

export function worldMutations(w: MutableWorld): WorldMutations {
  return {
    setAnswer: (id, answer) => {
      w.mustResolve(id);
      w.overlay.answers.set(id, answer);
    },
    removeSource: (sourceId) => {
      const s = decodeSourceId(sourceId);
      const ref = s ? w.resolve(s.promptTaskId) : null;
      if (!s || !ref || s.index >= sourceCount(ref.h, ref.pt.ordinal, ref.k))
        throw new RangeError(`unknown source_id ${sourceId}`);
      w.overlay.removeSource(sourceId);
    },
    deleteExecution: (id) => {
      w.mustResolve(id);
      w.overlay.delete(id);
    },
    corruptExecution: (id) => {
      w.mustResolve(id);
      w.overlay.corrupted.add(id);
    },
    corruptChild: (id, child) => {
      w.mustResolve(id);
      w.overlay.addChild(w.overlay.corruptChildren, id, child);
    },
    corruptSource: (sourceId) => {
      const s = decodeSourceId(sourceId);
      const ref = s ? w.resolve(s.promptTaskId) : null;
      if (!s || !ref || s.index >= sourceCount(ref.h, ref.pt.ordinal, ref.k))
        throw new RangeError(`unknown source_id ${sourceId}`);
      w.overlay.corruptSources.add(sourceId);
    },
    hideChild: (id, child) => {
      w.mustResolve(id);
      w.overlay.addChild(w.overlay.hiddenChildren, id, child);
    },
    corruptPlatformTask: (taskId) => {
      if (!w.catalog.platformTask(taskId)) throw new Error(`no platform task ${taskId}`);
      w.overlay.corruptPlatformTasks.add(taskId);
    },
    hideMonitoringTask: (projectId) => {
      if (!w.catalog.monitoringTask(projectId)) throw new Error(`no monitoring task ${projectId}`);
      w.overlay.hiddenMonitoringTasks.add(projectId);
    },
    moveToHeadBetweenPages: (id) => {
      const ref = w.mustResolve(id);
      w.overlay.headArmed.set(taskDayKey(ref.pt.ordinal, ref.day), ref.k);
    },
    resaveBetweenPages: (id, answer) => {
      const ref = w.mustResolve(id);
      w.overlay.resaveArmed.set(taskDayKey(ref.pt.ordinal, ref.day), {
        k: ref.k,
        promptTaskId: id,
        answer,
      });
    },
    // Each of the two undoes the other: an execution is in at most one of the two sets, and only
    // where the set changes what it was drawn with.
    takeScreenshot: (id) => {
      const ref = w.mustResolve(id);
      if (screenshotUrl(ref) !== null) return false;
      w.overlay.noScreenshots.delete(id);
      if (!hasScreenshot(ref.h)) w.overlay.lateScreenshots.add(id);
      return true;
    },
    dropScreenshot: (id) => {
      const ref = w.mustResolve(id);
      if (screenshotUrl(ref) === null) return false;
      w.overlay.lateScreenshots.delete(id);
      if (hasScreenshot(ref.h)) w.overlay.noScreenshots.add(id);
      return true;
    },
    renameMonitoringTask: (projectId, name) => {
      if (!w.catalog.monitoringTask(projectId)) throw new Error(`no monitoring task ${projectId}`);
      w.overlay.names.set(projectId, name);
    },
    reset: () => {
      w.overlay.clear();
      w.catalog.resetOverlays();
    },
  };
}
