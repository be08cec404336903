/**
 * The no-overlap lock, PostgreSQL: a session-level advisory lock on a dedicated connection,
 * exclusive (sync, backfill, state reset) or shared (distributed workers), held until unlock() or
 * close() (or until that connection dies, when PostgreSQL releases it).
 *
 * A lease is not proof: a connection cut silently (a NAT or firewall timeout) lets the server
 * release the lock while this process believes it holds it, and another run takes it at once.
 * So ownership is proven where it matters, at commit time (fence()): each write transaction
 * checks, locking the row FOR SHARE, that
 * - geo.sync_lock's `generation` is the one this holder saw (every exclusive taker increments
 *   it, and its increment waits for the fenced transactions in flight), and
 * - pg_locks still shows the lock granted to this holder's backend.
 * The connection also has TCP keepalive and a probe every PROBE_MS with a timeout, so a dead
 * connection is noticed between writes too: the lock is then `lost`, the `onLost` listeners hear
 * of it (the run stops) and every later fenced write is refused until unlock().
 */
import type { Logger } from 'pino';
import type pg from 'pg';
import type { Fence, LockMode, LockResult } from '../warehouse.ts';
import { createClient } from './pool.ts';

/** Advisory lock keys of this warehouse (bigint form, per database). */
export const SYNC_LOCK_KEY = 7_165_211_002;
export const MIGRATION_LOCK_KEY = 7_165_211_001;

/** The lock connection's application_name (how a proxy or pg_stat_activity recognizes it). */
export const LOCK_APPLICATION_NAME = 'geo-sync lock';

const LOCK_ROWS = `
  FROM pg_locks k
  WHERE k.locktype = 'advisory' AND k.granted AND k.objsubid = 1
    AND k.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND ((k.classid::bigint << 32) | k.objid::bigint) = $1`;

/** The holder of the lock as recorded, or the holding backend when nothing is recorded. */
const HOLDER_SQL = `
SELECT COALESCE(l.holder, 'PostgreSQL backend pid ' || k.pid || COALESCE(' (' || NULLIF(a.application_name, '') || ')', ''))
  || CASE WHEN k.mode = 'ShareLock' THEN ' (shared: a distributed worker at work)' ELSE '' END AS holder
${LOCK_ROWS.replace(
  'FROM pg_locks k',
  `FROM pg_locks k
  LEFT JOIN geo.sync_lock l ON l.lock_key = $1 AND l.backend_pid = k.pid
  LEFT JOIN pg_stat_activity a ON a.pid = k.pid`,
)}
ORDER BY k.mode DESC
LIMIT 1`;

/** $1 key, $2 generation, $3 backend pid: a row while this holder still holds the lock. */
const FENCE_SQL = `
SELECT 1 AS owned FROM geo.sync_lock l
WHERE l.lock_key = $1 AND l.generation = $2
  AND EXISTS (SELECT 1 ${LOCK_ROWS} AND k.pid = $3)
FOR SHARE OF l`;

/** Fenced writes after a loss: never owned. */
const NEVER_SQL = 'SELECT 1 AS owned WHERE false';

/** How often the idle lock connection is probed, and how long a probe may take. */
const PROBE_MS = 5_000;
/** How long unlock() waits for the connection to end before dropping it. */
const UNLOCK_TIMEOUT_MS = 5_000;

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** Drops a client's socket without waiting for the server (which may never answer). */
function destroy(client: pg.Client): void {
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}

export interface AdvisoryLockOptions {
  /** @default PROBE_MS */
  probeMs?: number;
}

export class AdvisoryLock {
  private client: pg.Client | null = null;
  private state: 'none' | 'held' | 'lost' = 'none';
  private generation = 0;
  private backendPid = 0;
  /** Counts holdings: a fence pinned by an earlier one that fails must not mark this one lost. */
  private holding = 0;
  private probeTimer: NodeJS.Timeout | null = null;
  private readonly lostListeners = new Set<(cause: unknown) => void>();
  private readonly probeMs: number;

  constructor(
    private readonly url: string,
    private readonly logger: Logger,
    opts: AdvisoryLockOptions = {},
  ) {
    this.probeMs = opts.probeMs ?? PROBE_MS;
  }

  /** One tryLock at a time: callers racing for the lock share one connection and one answer. */
  private pending: Promise<LockResult> | null = null;

  tryLock(holder: string, mode: LockMode = 'exclusive'): Promise<LockResult> {
    this.pending ??= this.take(holder, mode).finally(() => (this.pending = null));
    return this.pending;
  }

  private async take(holder: string, mode: LockMode): Promise<LockResult> {
    if (this.state === 'held') return { acquired: true };
    if (this.state === 'lost') await this.unlock();
    const client = await this.connection();
    const fn = mode === 'shared' ? 'pg_try_advisory_lock_shared' : 'pg_try_advisory_lock';
    const r = await client.query<{ ok: boolean; pid: number }>(
      `SELECT ${fn}($1) AS ok, pg_backend_pid() AS pid`,
      [SYNC_LOCK_KEY],
    );
    if (!r.rows[0]?.ok) {
      const h = await client.query<{ holder: string }>(HOLDER_SQL, [SYNC_LOCK_KEY]);
      return { acquired: false, holder: h.rows[0]?.holder };
    }
    this.backendPid = r.rows[0].pid;
    try {
      // An exclusive taker starts a new generation: fenced writes of earlier holders (a run
      // whose connection died unnoticed) are refused from now on. Its UPDATE waits for their
      // transactions in flight, which hold the row FOR SHARE.
      if (mode === 'exclusive') {
        const g = await client.query<{ generation: string | number }>(
          `INSERT INTO geo.sync_lock (lock_key, holder, backend_pid, acquired_at, generation)
           VALUES ($1, $2, pg_backend_pid(), now(), 1)
           ON CONFLICT (lock_key) DO UPDATE
           SET holder = EXCLUDED.holder, backend_pid = EXCLUDED.backend_pid,
               acquired_at = EXCLUDED.acquired_at, generation = geo.sync_lock.generation + 1
           RETURNING generation`,
          [SYNC_LOCK_KEY, holder],
        );
        this.generation = Number(g.rows[0]!.generation);
      } else {
        // Two statements: the SELECT's snapshot must see a row another shared taker inserted
        // (and committed) while this INSERT waited on it.
        await client.query(
          `INSERT INTO geo.sync_lock (lock_key, holder, backend_pid, acquired_at, generation)
           VALUES ($1, $2, pg_backend_pid(), now(), 0) ON CONFLICT (lock_key) DO NOTHING`,
          [SYNC_LOCK_KEY, holder],
        );
        const g = await client.query<{ generation: string | number }>(
          'SELECT generation FROM geo.sync_lock WHERE lock_key = $1',
          [SYNC_LOCK_KEY],
        );
        this.generation = Number(g.rows[0]!.generation);
      }
    } catch (e) {
      // Not holding a lock nobody could name: give it back (e.g. the warehouse is not migrated).
      await this.unlock();
      throw e;
    }
    this.state = 'held';
    this.holding++;
    this.startProbe(client);
    return { acquired: true };
  }

  /**
   * The commit-time check of ownership (see the file comment); null while no lock is held. After
   * a loss, a check that never passes, until unlock().
   */
  fence(): Fence | null {
    if (this.state === 'none') return null;
    if (this.state === 'lost') return { what: 'the warehouse lock', sql: NEVER_SQL, params: [], lock: true };
    const holding = this.holding;
    return {
      what: 'the warehouse lock',
      lock: true,
      sql: FENCE_SQL,
      params: [SYNC_LOCK_KEY, this.generation, this.backendPid],
      onLost: (e) => {
        if (this.holding === holding) this.markLost(e);
      },
    };
  }

  /** Calls `listener` once if the lock is lost while held (not on unlock()); returns the unsubscribe. */
  onLost(listener: (cause: unknown) => void): () => void {
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  /**
   * Releases the lock: ends the dedicated connection, which drops every session lock it held.
   * Bounded: a connection that does not end in time is dropped (the server releases the lock
   * when it notices).
   */
  async unlock(): Promise<void> {
    this.stopProbe();
    this.state = 'none';
    const client = this.client;
    this.client = null;
    if (!client) return;
    await withTimeout(client.end(), UNLOCK_TIMEOUT_MS, 'ending the lock connection').catch(() =>
      destroy(client),
    );
  }

  /** The lock is gone (or cannot be shown to be held): tell the listeners, drop the connection. */
  markLost(cause: unknown): void {
    if (this.state !== 'held') return;
    this.state = 'lost';
    this.stopProbe();
    const client = this.client;
    this.client = null;
    if (client) destroy(client);
    this.logger.error({ err: cause }, 'the warehouse lock is lost: this run stops');
    const listeners = [...this.lostListeners];
    this.lostListeners.clear();
    for (const l of listeners) l(cause);
  }

  private startProbe(client: pg.Client): void {
    this.stopProbe();
    const probe = () => {
      withTimeout(client.query('SELECT 1'), this.probeMs, 'the lock connection probe')
        .then(() => {
          if (this.state === 'held' && this.client === client)
            this.probeTimer = setTimeout(probe, this.probeMs);
        })
        .catch((e: unknown) => {
          if (this.client === client) this.markLost(e);
        });
    };
    this.probeTimer = setTimeout(probe, this.probeMs);
    this.probeTimer.unref();
  }

  private stopProbe(): void {
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = null;
  }

  private async connection(): Promise<pg.Client> {
    if (this.client) return this.client;
    const client = createClient(this.url, LOCK_APPLICATION_NAME, { keepAlive: true });
    const lost = (cause: unknown) => {
      if (this.client === client) this.markLost(cause);
    };
    client.on('error', lost);
    // A connection closed by the server without an error message loses the lock all the same.
    client.on('end', () => lost(new Error('the lock connection was closed')));
    await client.connect();
    this.client = client;
    return client;
  }
}
