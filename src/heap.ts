/**
 * How far the V8 heap may grow past what is live before a full collection, for the CLI process.
 *
 * V8 picks a growing factor between 1.1 and 4 from how fast it collects against how fast the
 * program allocates; a sync allocates fast (every response body, parsed, validated, turned into
 * rows), so V8 chose the high end and let dead objects pile up: on a 10k-execution day the heap
 * peaked at 144-164 MB used while a snapshot found 29-41 MB live. At factor 2 the peak is twice
 * what is live (measured, PostgreSQL, 10k day: peak RSS 179 MB against 246-264 MB, wall time
 * within the noise; 100k day: 223 MB). Unlike a `--max-old-space-size` cap, a factor can never
 * crash a run whose live data is larger than expected (a big `batchSize`): it only asks for
 * collections sooner.
 *
 * The flag is read by V8 at every full collection, so it can be set after start-up. A
 * `--heap-growing-percent` given to node by the user wins.
 */
import { setFlagsFromString } from 'node:v8';

export const HEAP_GROWING_PERCENT = 100;

export function boundHeapGrowth(execArgv: readonly string[] = process.execArgv): void {
  if (execArgv.some((a) => a.startsWith('--heap-growing-percent') || a.startsWith('--heap_growing_percent')))
    return;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
