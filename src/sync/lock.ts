/** No overlap: one geo-sync run per warehouse (PostgreSQL advisory lock / DuckDB lock file). */
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
  } = {},
): Promise<void> {
  // A non-finite wait (NaN from a bad caller) must not poll forever: it means no wait.
  const waitMs = Number.isFinite(opts.waitMs) ? Math.max(0, opts.waitMs!) : 0;
  const deadline = Date.now() + waitMs;
  let waiting = false;
  for (;;) {
    const r = await warehouse.tryLock(holder, opts.mode ?? 'exclusive');
    if (r.acquired) return;
    if (Date.now() >= deadline) throw new LockHeldError(r.holder);
    if (!waiting) opts.onWait?.(r.holder);
    waiting = true;
    // The process's stop signal ends the wait at once, with its reason (an interruption).
    await sleep(Math.min(opts.pollMs ?? 2000, Math.max(1, deadline - Date.now())), opts.signal);
  }
}
