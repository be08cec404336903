/**
 * Stopping an export (SIGINT/SIGTERM): what is being written stops at once and the lake stays as
 * it was. The engine's statement in flight (a COPY) is interrupted and no statement starts after
 * the stop; the warehouse's query in flight is cancelled (postgres-source.ts); the scratch folder
 * is removed and the lock released by the export's own cleanup (index.ts). Once the files are
 * moving into place nothing is stopped: the moves are quick, and the export ends as it would.
 */
import { rm } from 'node:fs/promises';
import { abortReason } from '../abort.ts';
import type { Engine } from './engine.ts';
import { writtenStep } from './files.ts';

/**
 * `engine` stopping with `signal`: on abort, its statement in flight is interrupted, later ones
 * are refused, and the failure either way is the stop's reason (an interruption).
 */
export function stoppableEngine(engine: Engine, signal: AbortSignal | undefined): Engine {
  if (!signal) return engine;
  const onAbort = () => engine.connection.interrupt();
  signal.addEventListener('abort', onAbort, { once: true });
  const stoppable =
    <T>(work: () => Promise<T>) =>
    async (): Promise<T> => {
      signal.throwIfAborted();
      try {
        return await work();
      } catch (e) {
        if (signal.aborted) throw abortReason(signal);
        throw e;
      }
    };
  return {
    connection: engine.connection,
    memoryLimit: engine.memoryLimit,
    rowGroupBytes: engine.rowGroupBytes,
    run: (sql, params) => stoppable(() => engine.run(sql, params))(),
    rows: (sql, params) => stoppable(() => engine.rows(sql, params))(),
    close() {
      signal.removeEventListener('abort', onAbort);
      engine.close();
    },
  };
}

/**
 * The last moment a stop leaves the lake as it was: every file written into `scratch`, none moved
 * yet. Stopped by then, the scratch folder is removed and the stop's reason thrown.
 */
export async function stopBeforeMoves(scratch: string, signal: AbortSignal | undefined): Promise<void> {
  try {
    await writtenStep(signal);
    signal?.throwIfAborted();
  } catch (e) {
    await rm(scratch, { recursive: true, force: true });
    throw e;
  }
}
