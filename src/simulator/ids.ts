/**
 * IDs that carry their own coordinates, so single-execution endpoints can rebuild an execution
 * (and a source) from the ID alone, with no lookup table:
 *
 *   prompt_task_id = ((ordinal * 2^15) + day) * 2^20 + k        (< 2^42)
 *   source_id      = prompt_task_id * 2^11 + index              (< 2^53, a safe integer)
 *
 * `ordinal` (1..127) is the platform task's position among the platform tasks that have
 * executions, `day` the day number since 2000-01-01 (until 2089), `k` the execution's index in
 * that platform task's day (up to 2^20 - 1), `index` the source's position (up to 2047; the
 * largest execution has 1,200 sources). Multiplication keeps them exact below 2^53.
 */
const K_SPAN = 2 ** 20;
const DAY_SPAN = 2 ** 15;
const ORD_SPAN = 2 ** 7;
const SOURCE_SPAN = 2 ** 11;

export const MAX_K = K_SPAN - 1;
export const MAX_ORDINAL = ORD_SPAN - 1;
export const MAX_SOURCES_PER_EXECUTION = SOURCE_SPAN;

export interface ExecutionCoord {
  ordinal: number;
  day: number;
  k: number;
}

export function encodePromptTaskId(ordinal: number, day: number, k: number): number {
  return (ordinal * DAY_SPAN + day) * K_SPAN + k;
}

/** null when the number cannot be a prompt_task_id of this scheme. */
export function decodePromptTaskId(id: number): ExecutionCoord | null {
  if (!Number.isSafeInteger(id) || id < K_SPAN * DAY_SPAN) return null;
  const k = id % K_SPAN;
  const rest = Math.floor(id / K_SPAN);
  const day = rest % DAY_SPAN;
  const ordinal = Math.floor(rest / DAY_SPAN);
  if (ordinal < 1 || ordinal > MAX_ORDINAL) return null;
  return { ordinal, day, k };
}

export function encodeSourceId(promptTaskId: number, index: number): number {
  return promptTaskId * SOURCE_SPAN + index;
}

export function decodeSourceId(id: number): { promptTaskId: number; index: number } | null {
  if (!Number.isSafeInteger(id) || id < 0) return null;
  return { promptTaskId: Math.floor(id / SOURCE_SPAN), index: id % SOURCE_SPAN };
}
