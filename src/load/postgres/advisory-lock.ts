/**
 * The no-overlap lock, PostgreSQL: an advisory lock, exclusive (sync, backfill, state reset) or
 * shared (distributed workers), held by a transaction kept open on a dedicated connection
 * (pg_try_advisory_xact_lock) until unlock() or close(), or until that connection dies, when
 * PostgreSQL ends the transaction and releases it.
 *
 * Why a transaction and not a session lock: a connection pooler in transaction mode (PgBouncer,
 * a hosted service's pooler) hands a client's next transaction to any server connection, so a
 * session lock stays behind on a server connection another client gets next (a second run was
 * let in, and the lock outlived both runs). An open transaction pins its server connection in
 * every pooling mode, and ends with it. The lock connection goes to GEO_LOCK_URL when set (a
 * direct URL of the same database, for a warehouse behind a transaction pooler), else to the
 * warehouse; a transaction pooler on that URL is detected when the connection opens
 * (checkSession) and refused with one line naming GEO_LOCK_URL, since holding the lock would pin
 * one of the pooler's few server connections for the whole run.
 *
 * A lease is not proof: a connection cut silently (a NAT or firewall timeout) lets the server
 * release the lock while this process believes it holds it, and another run takes it at once.
 * So ownership is proven where it matters, at commit time (fence()): each write transaction
 * checks, locking the row FOR SHARE, that
 * - geo.sync_lock's `generation` is the one this holder saw (every exclusive taker increments
 *   it, and its increment waits for the fenced transactions in flight), and
 * - pg_locks still shows the lock granted to this holder's backend.
 * pg_locks covers every database of the server, so the check holds wherever the lock lives, as
 * long as it is the warehouse's database (checked when the lock is taken). The transaction that
 * holds the lock writes nothing and reads no table: it holds back neither VACUUM nor DDL, and
 * geo.sync_lock is written on the warehouse's own connections. The connection also has TCP
 * keepalive and a probe every PROBE_MS with a timeout, so a dead connection is noticed between
 * writes too: the lock is then `lost`, the `onLost` listeners hear of it (the run stops) and
 * every later fenced write is refused until unlock().
 */
import type { Logger } from 'pino';
import type pg from 'pg';
import { UsageError } from '../../errors.ts';
import type { Fence, LockMode, LockResult } from '../warehouse.ts';
import { connectClient, createClient } from './pool.ts';
import { checkSession } from './session-check.ts';

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

/** $1 key, $2 backend pid: a row when the warehouse's connections see this lock granted. */
const SEEN_SQL = `SELECT 1 AS seen ${LOCK_ROWS} AND k.pid = $2`;

/**
 * Opens the lock's transaction. No idle timeout of the server's ends it between probes (the
 * write transactions keep theirs, pool.ts); PostgreSQL 17's transaction_timeout neither.
 */
const BEGIN_LOCK = `BEGIN; SET LOCAL idle_in_transaction_session_timeout = 0;
SELECT set_config('transaction_timeout', '0', true) WHERE current_setting('server_version_num')::int >= 170000`;

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
  /** The warehouse's own connections: geo.sync_lock is written there, and they must see the lock. */
  pool: pg.Pool;
  /**
   * The setting the lock's URL came from, for messages: GEO_LOCK_URL when it was given, else
   * GEO_WAREHOUSE.
   */
  setting: 'GEO_LOCK_URL' | 'GEO_WAREHOUSE';
  /**
   * How a connection failure names that setting: as the user gave it (`--warehouse (warehouse)`,
   * `GEO_LOCK_URL (lockUrl)`, a config file's key). @default `setting`
   */
  label?: string;
  /** Ends the lock connection's opening at once (the process is stopping). */
  signal?: AbortSignal | undefined;
  /** The lock's URL with its password masked. */
  description: string;
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
  /** Whether the lock's URL was shown to give a session of its own (checked once). */
  private sessionChecked = false;
  /** Whether the lock connection has a transaction open (the lock's, or one being opened). */
  private inTransaction = false;

  constructor(
    private readonly url: string,
    private readonly logger: Logger,
    private readonly opts: AdvisoryLockOptions,
  ) {
    this.probeMs = opts.probeMs ?? PROBE_MS;
  }

  /**
   * Opens the lock connection (without taking the lock) and checks that it is a session of its
   * own, not a transaction pooler's: a UsageError (exit 2) says what to set. Long-running
   * commands call it at start, so a pooler is refused then rather than at the first run.
   */
  async prepare(): Promise<void> {
    await this.connection();
    // Checked; not kept open while nothing is held (a worker may wait long for its first job).
    if (this.state === 'none' && !this.pending) await this.unlock();
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
    const fn = mode === 'shared' ? 'pg_try_advisory_xact_lock_shared' : 'pg_try_advisory_xact_lock';
    this.inTransaction = true;
    let pid: number;
    try {
      await client.query(BEGIN_LOCK);
      const r = await client.query<{ ok: boolean; pid: number }>(
        `SELECT ${fn}($1) AS ok, pg_backend_pid() AS pid`,
        [SYNC_LOCK_KEY],
      );
      if (!r.rows[0]?.ok) {
        await client.query('ROLLBACK');
        this.inTransaction = false;
        const h = await this.opts.pool.query<{ holder: string }>(HOLDER_SQL, [SYNC_LOCK_KEY]);
        return { acquired: false, holder: h.rows[0]?.holder };
      }
      pid = r.rows[0].pid;
    } catch (e) {
      await this.unlock();
      throw e;
    }
    this.backendPid = pid;
    try {
      // The fences run on the warehouse's connections: they must see this lock, or GEO_LOCK_URL
      // names another database (or server), and nothing would be locked. Checked before the
      // generation moves, so a misconfigured run never fences out the real holder.
      const seen = await this.opts.pool.query(SEEN_SQL, [SYNC_LOCK_KEY, pid]);
      if (seen.rows.length === 0) {
        throw new UsageError(
          `GEO_LOCK_URL (${this.opts.description}) reaches another database than GEO_WAREHOUSE: the lock taken there is not seen from the warehouse; point it at the warehouse's database`,
        );
      }
      // An exclusive taker starts a new generation: fenced writes of earlier holders (a run
      // whose connection died unnoticed) are refused from now on. Its UPDATE waits for their
      // transactions in flight, which hold the row FOR SHARE. Written on the warehouse's
      // connections: a row lock in the lock's transaction would block every fence until unlock.
      if (mode === 'exclusive') {
        const g = await this.opts.pool.query<{ generation: string | number }>(
          `INSERT INTO geo.sync_lock (lock_key, holder, backend_pid, acquired_at, generation)
           VALUES ($1, $2, $3, now(), 1)
           ON CONFLICT (lock_key) DO UPDATE
           SET holder = EXCLUDED.holder, backend_pid = EXCLUDED.backend_pid,
               acquired_at = EXCLUDED.acquired_at, generation = geo.sync_lock.generation + 1
           RETURNING generation`,
          [SYNC_LOCK_KEY, holder, pid],
        );
        this.generation = Number(g.rows[0]!.generation);
      } else {
        // Two statements: the SELECT's snapshot must see a row another shared taker inserted
        // (and committed) while this INSERT waited on it.
        await this.opts.pool.query(
          `INSERT INTO geo.sync_lock (lock_key, holder, backend_pid, acquired_at, generation)
           VALUES ($1, $2, $3, now(), 0) ON CONFLICT (lock_key) DO NOTHING`,
          [SYNC_LOCK_KEY, holder, pid],
        );
        const g = await this.opts.pool.query<{ generation: string | number }>(
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
   * Releases the lock: ends its transaction and the dedicated connection. Bounded: a connection
   * that does not end in time is dropped (the server ends the transaction when it notices).
   */
  async unlock(): Promise<void> {
    this.stopProbe();
    this.state = 'none';
    const client = this.client;
    const rollback = this.inTransaction;
    this.client = null;
    this.inTransaction = false;
    if (!client) return;
    const end = async () => {
      // Through a pooler the connection is a client's: ending the transaction first hands the
      // server connection back clean rather than relying on the pooler to discard it.
      if (rollback) await client.query('ROLLBACK').catch(() => undefined);
      await client.end();
    };
    await withTimeout(end(), UNLOCK_TIMEOUT_MS, 'ending the lock connection').catch(() => destroy(client));
  }

  /** The lock is gone (or cannot be shown to be held): tell the listeners, drop the connection. */
  markLost(cause: unknown): void {
    if (this.state !== 'held') return;
    this.state = 'lost';
    this.stopProbe();
    const client = this.client;
    this.client = null;
    this.inTransaction = false;
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
      if (this.client !== client) return;
      if (this.state === 'held') this.markLost(cause);
      else {
        // Nothing held on it: the next take opens a new one.
        this.client = null;
        this.inTransaction = false;
      }
    };
    client.on('error', lost);
    // A connection closed by the server without an error message loses the lock all the same.
    client.on('end', () => lost(new Error('the lock connection was closed')));
    await connectClient(
      client,
      this.url,
      this.opts.label ?? this.opts.setting,
      `PostgreSQL at ${this.opts.description} for the warehouse lock`,
      this.opts.signal,
    );
    if (!this.sessionChecked) {
      try {
        const pooled = await checkSession(client, this.url, this.logger);
        if (pooled) throw new UsageError(this.poolerMessage(pooled));
      } catch (e) {
        await withTimeout(client.end(), UNLOCK_TIMEOUT_MS, 'ending the lock connection').catch(() =>
          destroy(client),
        );
        throw e;
      }
      this.sessionChecked = true;
    }
    this.client = client;
    return client;
  }

  private poolerMessage(evidence: string): string {
    const what = `goes through a connection pooler in transaction pooling mode (${evidence})`;
    return this.opts.setting === 'GEO_LOCK_URL'
      ? `GEO_LOCK_URL (${this.opts.description}) ${what}, where the warehouse lock cannot be held: point it at PostgreSQL directly (or at a pooler in session mode)`
      : `GEO_WAREHOUSE (${this.opts.description}) ${what}, where the warehouse lock cannot be held: set GEO_LOCK_URL to a postgres:// URL of the same database that reaches PostgreSQL directly (or use session pooling)`;
  }
}
