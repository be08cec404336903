/**
 * One key, one rate: GEO_REQUESTS_PER_SECOND and GEO_CONCURRENCY are totals across every live
 * worker. Each worker beats a heartbeat row in `geo_queue.workers` and, every tick, takes
 *
 *     share = total * factor / live workers
 *
 * where a live worker is one with a fresh heartbeat that is busy, just started, or idle for less
 * than `idleGraceMs` (workers idle at the end of a backfill leave their share to the busy ones),
 * and `factor` (0..1] is AIMD state shared through `geo_queue.rate_state`: a 429 seen by any
 * worker halves it for all (once per cooldown: the requests in flight when the limit hit all
 * report it, and that is one signal); calm ticks raise it by a step again, one worker at a time.
 * Each worker's local RequestQueue still reacts at once to its own 429 (pause on Retry-After,
 * local decrease) until the next tick sets the shared share.
 *
 * The rate share is a fraction (0.4 requests/s is kept as such by the RequestQueue). Concurrency
 * is whole requests, so it is not divided but handed out: `total * factor` (at least 1) slots,
 * each a row of `geo_queue.concurrency_slots` held by one worker, fair shares by rank among the
 * live workers (some get 0 when there are more workers than slots, and then take no job). The rank
 * is first come, first served: workers by the start of the oldest job they are running, then the
 * ones without a job. So a worker ranked out of slots while it still runs jobs (the factor fell
 * after a 429, or another worker joined) rises as the others finish their older jobs and take
 * newer ones, instead of holding its jobs without a request while their leases are renewed. A
 * worker gives back a slot only once it has fewer requests in flight than slots, so the fleet
 * never has more in flight than GEO_CONCURRENCY. A dead worker's slots are taken over once its
 * heartbeat is `staleMs` old. A worker that stalled that long and resumed starts nothing until its
 * next tick says what it holds (its share expires staleMs / 2 after the tick that set it); only
 * the requests it had in flight when it stalled can overlap the slots taken over meanwhile (among
 * them any that had passed its gate and were not yet written to a socket: they reach the server
 * on resuming, and nothing short of the server's own fencing could call them back).
 */
import { hostname } from 'node:os';
import type pg from 'pg';
import { QUEUE_SCHEMA } from './queue.ts';

export interface SharedRateOptions {
  workerId: string;
  totalRequestsPerSecond: number;
  totalConcurrency: number;
  /** A worker whose heartbeat is older than this is not counted as live. @default 5000 */
  staleMs?: number;
  /** A worker idle for longer than this is not counted. @default 3000 */
  idleGraceMs?: number;
  /** Halving happens at most once per this many ms across all workers. @default 2000 */
  decreaseCooldownMs?: number;
  /** Calm time after a change before the factor rises a step. @default 3000 */
  increaseAfterMs?: number;
  /** @default 0.1 */
  increaseStep?: number;
  /** The floor of the factor. @default 0.05 */
  minFactor?: number;
}

export interface Share {
  live: number;
  factor: number;
  requestsPerSecond: number;
  concurrency: number;
}

type Db = Pick<pg.ClientBase, 'query'>;

export class SharedRate {
  readonly #o: Required<SharedRateOptions>;

  constructor(opts: SharedRateOptions) {
    this.#o = {
      staleMs: 5000,
      idleGraceMs: 3000,
      decreaseCooldownMs: 2000,
      increaseAfterMs: 3000,
      increaseStep: 0.1,
      minFactor: 0.05,
      ...opts,
    };
  }
  /** A worker whose heartbeat is older than this is counted dead, and its slots are taken over. */
  get staleMs(): number {
    return this.#o.staleMs;
  }

  /**
   * One tick: heartbeat, report the 429s seen since the last tick (if any), let the factor rise
   * when calm, and return this worker's share.
   */
  async tick(
    db: Db,
    rateLimitedSinceLastTick: number,
    busy = true,
    /** Requests that may be in flight before this tick's share applies (RequestQueue's inFlightCeiling). */
    inFlight = 0,
    /** When the oldest job this worker is running started (its rank); undefined: none. */
    busySince?: Date,
  ): Promise<Share> {
    const o = this.#o;
    await db.query(
      `INSERT INTO ${QUEUE_SCHEMA}.workers (worker_id, host, pid, busy_since) VALUES ($1, $2, $3, $5)
       ON CONFLICT (worker_id) DO UPDATE SET seen_at = now(), busy_since = $5,
         idle_since = CASE WHEN $4 THEN NULL ELSE COALESCE(${QUEUE_SCHEMA}.workers.idle_since, now()) END`,
      [o.workerId, hostname(), process.pid, busy, busySince?.toISOString() ?? null],
    );
    if (rateLimitedSinceLastTick > 0) {
      await db.query(
        `UPDATE ${QUEUE_SCHEMA}.rate_state SET rate_limited = rate_limited + $1,
           factor = CASE WHEN last_decrease_at < now() - $2 * interval '1 millisecond'
                         THEN GREATEST($3, factor * 0.5) ELSE factor END,
           last_decrease_at = CASE WHEN last_decrease_at < now() - $2 * interval '1 millisecond'
                                   THEN now() ELSE last_decrease_at END,
           last_change_at = now()
         WHERE id = 1`,
        [rateLimitedSinceLastTick, o.decreaseCooldownMs, o.minFactor],
      );
    } else {
      await db.query(
        `UPDATE ${QUEUE_SCHEMA}.rate_state SET factor = LEAST(1, factor + $1), last_change_at = now()
         WHERE id = 1 AND factor < 1 AND last_change_at < now() - $2 * interval '1 millisecond'`,
        [o.increaseStep, o.increaseAfterMs],
      );
    }
    const r = await db.query<{ workers: string[]; factor: number }>(
      `SELECT ARRAY(SELECT worker_id FROM ${QUEUE_SCHEMA}.workers
                    WHERE (seen_at > now() - $1 * interval '1 millisecond'
                           AND (idle_since IS NULL OR idle_since > now() - $3 * interval '1 millisecond'))
                       OR worker_id = $2
                    ORDER BY busy_since NULLS LAST, worker_id) AS workers,
              (SELECT factor FROM ${QUEUE_SCHEMA}.rate_state WHERE id = 1) AS factor`,
      [o.staleMs, o.workerId, o.idleGraceMs],
    );
    const workers = r.rows[0]?.workers ?? [o.workerId];
    const live = Math.max(1, workers.length);
    const rank = Math.max(0, workers.indexOf(o.workerId));
    const factor = Number(r.rows[0]?.factor ?? 1);
    const slots = Math.max(1, Math.floor(o.totalConcurrency * factor));
    const target = Math.floor(slots / live) + (rank < slots % live ? 1 : 0);
    // It may hold more slots than its target while more requests than that are in flight, but
    // starts new ones only within the target: its in-flight count falls, and the slots beyond
    // go back at a later tick. (Running at what it holds, a busy worker would never give any
    // back, and a worker joining a busy fleet would wait for a slot for ever.)
    const holding = await this.#holdSlots(db, target, inFlight);
    return {
      live,
      factor,
      requestsPerSecond: (o.totalRequestsPerSecond * factor) / live,
      concurrency: Math.min(holding, target),
    };
  }

  /**
   * Holds `target` slots, or more while more requests than that are in flight (given back at a
   * later tick): refreshes the slots held, gives back the extra ones, takes free or stale ones.
   * Returns how many it holds.
   */
  async #holdSlots(db: Db, target: number, inFlight: number): Promise<number> {
    const o = this.#o;
    const total = o.totalConcurrency;
    await db.query(
      `INSERT INTO ${QUEUE_SCHEMA}.concurrency_slots (slot) SELECT generate_series(0, $1 - 1) ON CONFLICT DO NOTHING`,
      [total],
    );
    const held = await db.query<{ slot: number }>(
      `UPDATE ${QUEUE_SCHEMA}.concurrency_slots SET seen_at = now()
       WHERE worker_id = $1 AND slot < $2 RETURNING slot`,
      [o.workerId, total],
    );
    let holding = held.rowCount ?? 0;
    const keep = Math.max(target, Math.min(holding, inFlight));
    if (holding > keep) {
      const r = await db.query(
        `UPDATE ${QUEUE_SCHEMA}.concurrency_slots SET worker_id = NULL, seen_at = NULL
         WHERE slot IN (SELECT slot FROM ${QUEUE_SCHEMA}.concurrency_slots WHERE worker_id = $1
                        ORDER BY slot DESC LIMIT $2)`,
        [o.workerId, holding - keep],
      );
      holding -= r.rowCount ?? 0;
    } else if (holding < target) {
      const r = await db.query(
        `UPDATE ${QUEUE_SCHEMA}.concurrency_slots SET worker_id = $1, seen_at = now()
         WHERE slot IN (SELECT slot FROM ${QUEUE_SCHEMA}.concurrency_slots
                        WHERE slot < $3 AND (worker_id IS NULL OR seen_at < now() - $4 * interval '1 millisecond')
                        ORDER BY slot LIMIT $2 FOR UPDATE SKIP LOCKED)`,
        [o.workerId, target - holding, total, o.staleMs],
      );
      holding += r.rowCount ?? 0;
    }
    return holding;
  }

  /** The worker is leaving: the others take its share at their next tick. */
  async leave(db: Db): Promise<void> {
    await db.query(
      `UPDATE ${QUEUE_SCHEMA}.concurrency_slots SET worker_id = NULL, seen_at = NULL WHERE worker_id = $1`,
      [this.#o.workerId],
    );
    await db.query(`DELETE FROM ${QUEUE_SCHEMA}.workers WHERE worker_id = $1`, [this.#o.workerId]);
  }
}
