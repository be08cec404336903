/**
 * No overlap: one exclusive geo-sync run per warehouse (sync, backfill, state reset), or any
 * number of shared holders (distributed workers, an enqueue) but no exclusive one meanwhile
 * (PostgreSQL advisory lock / DuckDB lock file).
 */
import { hostname } from 'node:os';
import { sleep } from '../abort.ts';
import type { LockMode, Warehouse } from '../load/warehouse.ts';

export class LockHeldError extends Error {
  readonly holder: string | undefined;
  constructor(holder: string | undefined) {
    super(
      `another geo-sync run holds the warehouse lock${holder ? `: ${holder}` : ''} (use --wait-for-lock to wait)`,
    );
    this.name = 'LockHeldError';
    this.holder = holder;
  }
}

/** The lock was lost during a run (its PostgreSQL connection died): the run stops, exit 1. */
export class LockLostError extends Error {
  readonly code = 'LOCK_LOST' as const;
  constructor(cause: unknown) {
    super(
      'the warehouse lock was lost (its database connection ended): the run stopped rather than go on ' +
        'unlocked; units without a checkpoint are redone by the next run',
      { cause },
    );
    this.name = 'LockLostError';
  }
}

/**
 * Taking the lock exclusive proves that nobody else runs on this warehouse: a run, a worker's job
 * attempt or a distributed enqueue writes and finishes its sync_runs row while it holds the lock
 * (shared or exclusive), so a row still `running` now belongs to a process that ended without
 * finishing it (kill -9, an out-of-memory kill, a machine stopped). It is marked `interrupted`,
 * its error saying who found it and when; `finished_at` stays NULL (when it ended is unknown).
 * Its finished units kept their checkpoints; the rest is redone by whoever runs next.
 */
async function interruptAbandoned(
  warehouse: Warehouse,
  holder: string,
  tell: ((runIds: string[]) => void) | undefined,
): Promise<void> {
  const note =
    `interrupted: found still running at ${new Date().toISOString()} by ${holder}, which took the ` +
    'warehouse lock; its process had ended without recording its end (killed, or its machine stopped)';
  const runIds = await warehouse.interruptAbandonedRuns(note);
  if (runIds.length > 0) tell?.(runIds);
}

export function lockHolder(kind: string, now = new Date()): string {
  return `geo-sync ${kind} pid ${process.pid} on ${hostname()} since ${now.toISOString()}`;
}

/**
 * Takes the lock, or throws LockHeldError; with `waitMs` > 0 polls until it is free or the
 * time is up. The caller releases it with warehouse.unlock() (closing the warehouse also does).
 */
export async function acquireLock(
  warehouse: Warehouse,
  holder: string,
  opts: {
    /** exclusive (default): a run that writes alone; shared: alongside workers, not a run. */
    mode?: LockMode;
    waitMs?: number;
    pollMs?: number;
    signal?: AbortSignal;
    /** Told once, when the lock is held by another and the wait begins. */
    onWait?: (holder: string | undefined) => void;
    /** Told the runs found still `running` and marked `interrupted` (exclusive mode only). */
    onInterrupted?: (runIds: string[]) => void;
  } = {},
): Promise<void> {
  // A non-finite wait (NaN from a bad caller) must not poll forever: it means no wait.
  const waitMs = Number.isFinite(opts.waitMs) ? Math.max(0, opts.waitMs!) : 0;
  const deadline = Date.now() + waitMs;
  let waiting = false;
  for (;;) {
    const r = await warehouse.tryLock(holder, opts.mode ?? 'exclusive');
    if (r.acquired) {
      if ((opts.mode ?? 'exclusive') === 'exclusive')
        await interruptAbandoned(warehouse, holder, opts.onInterrupted);
      return;
    }
    if (Date.now() >= deadline) throw new LockHeldError(r.holder);
    if (!waiting) opts.onWait?.(r.holder);
    waiting = true;
    // The process's stop signal ends the wait at once, with its reason (an interruption).
    await sleep(Math.min(opts.pollMs ?? 2000, Math.max(1, deadline - Date.now())), opts.signal);
  }
}
