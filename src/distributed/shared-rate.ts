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

  /**
   * One tick: heartbeat, report the 429s seen since the last tick (if any), let the factor rise
   * when calm, and return this worker's share.
   */
  async tick(db: Db, rateLimitedSinceLastTick: number, busy = true): Promise<Share> {
    const o = this.#o;
    await db.query(
      `INSERT INTO ${QUEUE_SCHEMA}.workers (worker_id, host, pid) VALUES ($1, $2, $3)
       ON CONFLICT (worker_id) DO UPDATE SET seen_at = now(),
         idle_since = CASE WHEN $4 THEN NULL ELSE COALESCE(${QUEUE_SCHEMA}.workers.idle_since, now()) END`,
      [o.workerId, hostname(), process.pid, busy],
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
    const r = await db.query<{ live: string; factor: number }>(
      `SELECT (SELECT count(*) FROM ${QUEUE_SCHEMA}.workers
                WHERE (seen_at > now() - $1 * interval '1 millisecond'
                       AND (idle_since IS NULL OR idle_since > now() - $3 * interval '1 millisecond'))
                   OR worker_id = $2) AS live,
              (SELECT factor FROM ${QUEUE_SCHEMA}.rate_state WHERE id = 1) AS factor`,
      [o.staleMs, o.workerId, o.idleGraceMs],
    );
    const live = Math.max(1, Number(r.rows[0]?.live ?? 1));
    const factor = Number(r.rows[0]?.factor ?? 1);
    return {
      live,
      factor,
      requestsPerSecond: (o.totalRequestsPerSecond * factor) / live,
      concurrency: Math.max(1, Math.floor((o.totalConcurrency * factor) / live)),
    };
  }

  /** The worker is leaving: the others take its share at their next tick. */
  async leave(db: Db): Promise<void> {
    await db.query(`DELETE FROM ${QUEUE_SCHEMA}.workers WHERE worker_id = $1`, [this.#o.workerId]);
  }
}
