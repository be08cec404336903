/**
 * What the simulated world offers its server and tests: the wire shapes it serves, the totals of
 * a day (ground truth for tests), the mutations a test applies, and the options it is built from.
 */
import type { z } from 'zod';
import type { User } from '../api/schemas/account.ts';
import type { MonitoringTask, PlatformTask, Screenshot, Source } from '../api/schemas/hierarchical.ts';
import type { LegacyMonitoringTask, LegacyMonitoringTaskDetail } from '../api/schemas/legacy.ts';
import type { ProductSet } from './children.ts';
import type { SiteDiagnosisWire } from './diagnosis.ts';
import type { WirePromptExecution, WirePromptResultItem } from './executions.ts';
import type { BalanceWire, DeductionWire } from './finance.ts';
import type { CorruptibleChild, ExecutionChild } from './mutations.ts';

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
   * The platform task is served by project/tasks (one bad item of the list) and task/info with
   * `status: "abc"`: a client quarantines it, and its units are not planned.
   */
  corruptPlatformTask(taskId: number): void;
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
  /**
   * The execution has no screenshot (listed with `screenshot_url` null, and prompt/screenshot
   * says none), as if it had been drawn without one: for a test that needs such an execution
   * whatever day it runs on. Returns false when it already had none. takeScreenshot undoes it.
   */
  dropScreenshot(promptTaskId: number): boolean;
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
  /** Added to the seed of the executions' draws only (GEO_SIM_WORLD_SHIFT): 0 by default. */
  drawShift: number;
}
