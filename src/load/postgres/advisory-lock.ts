/**
 * The no-overlap lock, PostgreSQL: a session-level pg_try_advisory_lock on a dedicated
 * connection, held until unlock() or close() (or until that connection dies, when PostgreSQL
 * releases it). The holder text is kept in geo.sync_lock so a refused caller can say who holds
 * it; a row whose backend no longer holds the lock is ignored.
 *
 * A lost connection loses the lock, and another run may take it at once: the `onLost` listeners
 * hear of it (the run stops instead of going on unlocked).
 */
import type { Logger } from 'pino';
import type pg from 'pg';
import type { LockResult } from '../warehouse.ts';
import { createClient } from './pool.ts';

/** Advisory lock keys of this warehouse (bigint form, per database). */
export const SYNC_LOCK_KEY = 7_165_211_002;
export const MIGRATION_LOCK_KEY = 7_165_211_001;

/** The holder of the lock as recorded, or the holding backend when nothing is recorded. */
const HOLDER_SQL = `
SELECT COALESCE(l.holder, 'PostgreSQL backend pid ' || k.pid || COALESCE(' (' || NULLIF(a.application_name, '') || ')', '')) AS holder
FROM pg_locks k
LEFT JOIN geo.sync_lock l ON l.lock_key = $1 AND l.backend_pid = k.pid
LEFT JOIN pg_stat_activity a ON a.pid = k.pid
WHERE k.locktype = 'advisory' AND k.granted AND k.objsubid = 1
  AND k.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND ((k.classid::bigint << 32) | k.objid::bigint) = $1
LIMIT 1`;

export class AdvisoryLock {
  private client: pg.Client | null = null;
  private held = false;
  private readonly lostListeners = new Set<(cause: unknown) => void>();

  constructor(
    private readonly url: string,
    private readonly logger: Logger,
  ) {}

  async tryLock(holder: string): Promise<LockResult> {
    if (this.held) return { acquired: true };
    const client = await this.connection();
    const r = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [SYNC_LOCK_KEY]);
    if (!r.rows[0]?.ok) {
      const h = await client.query<{ holder: string }>(HOLDER_SQL, [SYNC_LOCK_KEY]);
      return { acquired: false, holder: h.rows[0]?.holder };
    }
    this.held = true;
    try {
      await client.query(
        `INSERT INTO geo.sync_lock (lock_key, holder, backend_pid, acquired_at)
         VALUES ($1, $2, pg_backend_pid(), now())
         ON CONFLICT (lock_key) DO UPDATE
         SET holder = EXCLUDED.holder, backend_pid = EXCLUDED.backend_pid, acquired_at = EXCLUDED.acquired_at`,
        [SYNC_LOCK_KEY, holder],
      );
    } catch (e) {
      // Not holding a lock nobody could name: give it back (e.g. the warehouse is not migrated).
      await this.unlock();
      throw e;
    }
    return { acquired: true };
  }

  /** Calls `listener` once if the lock is lost while held (not on unlock()); returns the unsubscribe. */
  onLost(listener: (cause: unknown) => void): () => void {
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  /** Releases the lock: ends the dedicated connection, which drops every session lock it held. */
  async unlock(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (!client) return;
    if (this.held) {
      this.held = false;
      await client
        .query('DELETE FROM geo.sync_lock WHERE lock_key = $1 AND backend_pid = pg_backend_pid()', [
          SYNC_LOCK_KEY,
        ])
        .catch(() => undefined);
    }
    await client.end().catch(() => undefined);
  }

  private async connection(): Promise<pg.Client> {
    if (this.client) return this.client;
    const client = createClient(this.url, 'geo-sync lock');
    const lost = (cause: unknown) => {
      if (this.client !== client) return; // unlock() ended it, or it was already lost
      this.client = null;
      if (!this.held) return;
      this.held = false;
      this.logger.error({ err: cause }, 'the warehouse lock connection failed: the lock is lost');
      const listeners = [...this.lostListeners];
      this.lostListeners.clear();
      for (const l of listeners) l(cause);
    };
    client.on('error', lost);
    // A connection closed by the server without an error message loses the lock all the same.
    client.on('end', () => lost(new Error('the lock connection was closed')));
    await client.connect();
    this.client = client;
    return client;
  }
}
