/**
 * The job queue of a distributed backfill: pg-boss 10 in its own schema (`geo_queue`) of the
 * warehouse's PostgreSQL database, plus four small tables of ours in the same schema:
 * - `backfills`: one row per distributed backfill (what was planned), so `--wait` can report it;
 * - `workers`: a heartbeat per live worker, so each takes its share of the key's rate;
 * - `rate_state`: the shared AIMD factor that a 429 seen by any worker lowers for all;
 * - `concurrency_slots`: the requests in flight of the fleet, one row per slot held.
 *
 * pg-boss keeps job states (created, retry, active, completed, failed), expires the job of a
 * killed worker after its `expireInSeconds` and retries failed jobs with backoff.
 */
import { createHash } from 'node:crypto';
import type PgBoss from 'pg-boss';
import pg from 'pg';
import type { Logger } from 'pino';
import { UsageError } from '../errors.ts';
import type { Config } from '../config.ts';
import { parseWarehouseTarget } from '../load/target.ts';
import { guardedPool } from '../load/postgres/pool.ts';

/** The queue's schema: never `geo`, whose tables belong to the warehouse. */
export const QUEUE_SCHEMA = 'geo_queue';
/** One pg-boss queue holds every job; a job's data names its backfill. */
export const QUEUE_NAME = 'geo-sync-units';

export interface UnitJobData {
  backfill: string;
  task_id: number;
  date: string;
}
export interface AccountJobData {
  backfill: string;
  /** Site diagnoses of these page projects, then finance: what a local run reads after its units. */
  account: { customers: number[] };
}
export type JobData = UnitJobData | AccountJobData;

export const isAccountJob = (d: JobData): d is AccountJobData => 'account' in d;

/** The PostgreSQL URL of the warehouse, or a one-line UsageError (exit 2) for DuckDB. */
export function queueUrl(config: Config, what: string): string {
  const t = parseWarehouseTarget(config.warehouse);
  if (t.dialect !== 'postgres') {
    throw new UsageError(
      `${what} needs a PostgreSQL warehouse for its job queue (GEO_WAREHOUSE=postgres://...); ${t.description} is DuckDB`,
    );
  }
  return t.url;
}

/** A name-based UUID (RFC 4122 version 5, SHA-1): the same name always gives the same id. */
export function uuidV5(name: string, namespace = '6f1c0a52-8d0e-4c1f-9a55-2f1e3b6f0c11'): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  const hash = createHash('sha1').update(ns).update(name, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const h = hash.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** The queue's own connections (settling jobs, leases, heartbeats), guarded like the warehouse's. */
export function createQueuePool(url: string, applicationName: string, logger: Logger): pg.Pool {
  return guardedPool({ connectionString: url, max: 2, application_name: applicationName }, (err) =>
    logger.warn({ err }, 'job queue connection closed'),
  );
}

export interface BossOptions {
  /** Run pg-boss maintenance (expiry of killed workers' jobs, archiving) in this process. */
  supervise?: boolean;
  jobTimeoutSeconds: number;
}

/** A started pg-boss on the queue schema (created or migrated when missing). */
export async function startBoss(url: string, logger: Logger, opts: BossOptions): Promise<PgBoss> {
  // Loaded here, not at the top: every CLI command imports this module (migrate, runs), and only
  // the queue's users should pay for loading pg-boss (with node-cron and prom-client also made
  // lazy, `geo-sync --help` went from 111 to 108 MB peak RSS: small, but paid by every run).
  const { default: PgBoss } = await import('pg-boss');
  for (let attempt = 1; ; attempt++) {
    const boss = new PgBoss({
      connectionString: url,
      schema: QUEUE_SCHEMA,
      application_name: 'geo-sync-queue',
      max: 3,
      supervise: opts.supervise ?? false,
      schedule: false,
      migrate: true,
      // Expiry is found by maintenance: run it often enough that a killed worker's job comes back
      // soon after its timeout (pg-boss runs it once per interval across all processes).
      maintenanceIntervalSeconds: Math.min(120, Math.max(1, Math.floor(opts.jobTimeoutSeconds / 3))),
    });
    boss.on('error', (e) => logger.warn({ err: e }, 'job queue error'));
    try {
      await boss.start();
      return boss;
    } catch (e) {
      await boss.stop({ graceful: false, wait: true }).catch(() => undefined);
      // Two processes installing the queue's schema at once (two migrates, workers starting
      // together): pg-boss serializes its install with a transaction-level lock, yet through a
      // transaction pooler the second CREATE SCHEMA IF NOT EXISTS still met the first's row
      // (unique violation on pg_namespace, 1 run in 6 of test/integration/pgbouncer.test.ts under
      // load). The schema the other made is as good: a new start finds it installed.
      const code = (e as { code?: unknown } | null)?.code;
      if (attempt >= 5 || code !== '23505') throw e;
      logger.debug({ err: e, attempt }, 'job queue: installed by another process meanwhile; starting again');
      await new Promise((r) => setTimeout(r, 200 * attempt));
    }
  }
}

const OWN_TABLES = `
CREATE TABLE IF NOT EXISTS ${QUEUE_SCHEMA}.backfills (
  backfill_id   TEXT PRIMARY KEY,
  args          JSONB NOT NULL,
  dates         TEXT[] NOT NULL,
  customers     INTEGER NOT NULL,
  monitoring_tasks INTEGER NOT NULL,
  platform_tasks INTEGER NOT NULL,
  units_total   INTEGER NOT NULL,
  units_skipped INTEGER NOT NULL,
  created_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS ${QUEUE_SCHEMA}.workers (
  worker_id  TEXT PRIMARY KEY,
  host       TEXT NOT NULL,
  pid        INTEGER NOT NULL,
  started_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  seen_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
  -- Since when the worker has had no job (NULL: busy, or just started).
  idle_since TIMESTAMPTZ,
  -- When the oldest job it runs started (NULL: none): its rank for concurrency slots.
  busy_since TIMESTAMPTZ
);
-- Queues created before busy_since existed.
ALTER TABLE ${QUEUE_SCHEMA}.workers ADD COLUMN IF NOT EXISTS busy_since TIMESTAMPTZ;
CREATE TABLE IF NOT EXISTS ${QUEUE_SCHEMA}.rate_state (
  id               INTEGER PRIMARY KEY CHECK (id = 1),
  factor           DOUBLE PRECISION NOT NULL,
  rate_limited     BIGINT NOT NULL DEFAULT 0,
  last_decrease_at TIMESTAMPTZ NOT NULL DEFAULT '-infinity',
  last_change_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);
INSERT INTO ${QUEUE_SCHEMA}.rate_state (id, factor) VALUES (1, 1) ON CONFLICT DO NOTHING;
-- Requests in flight, as numbered slots: a worker sends at most as many at once as it holds
-- rows here, so the fleet's total never exceeds GEO_CONCURRENCY (slots 0..GEO_CONCURRENCY-1).
CREATE TABLE IF NOT EXISTS ${QUEUE_SCHEMA}.concurrency_slots (
  slot      INTEGER PRIMARY KEY,
  worker_id TEXT,
  seen_at   TIMESTAMPTZ
);
`;

/**
 * Creates the queue schema (pg-boss's tables, the queue, our tables) when missing; safe twice
 * and from several processes at once (pg-boss migrates under a transaction-level advisory lock;
 * ours are IF NOT EXISTS under one too). Safe behind a transaction pooler: nothing outlives a
 * transaction.
 */
export async function migrateQueue(url: string, config: Config, logger: Logger): Promise<void> {
  const boss = await startBoss(url, logger, { jobTimeoutSeconds: config.jobTimeoutSeconds });
  try {
    if (!(await boss.getQueue(QUEUE_NAME))) {
      try {
        await boss.createQueue(QUEUE_NAME, {
          name: QUEUE_NAME,
          policy: 'standard',
          retryLimit: config.jobRetries,
          retryDelay: config.jobRetryDelaySeconds,
          retryBackoff: true,
          expireInSeconds: config.jobTimeoutSeconds,
        });
      } catch (e) {
        // Two processes creating it at once (two `migrate`s, workers starting together):
        // pg-boss's create_queue takes no lock first, and one of them fails (a deadlock, or the
        // queue's key). The queue the other one made is as good; wait for it to commit.
        if (!(await queueAppears(boss))) throw e;
      }
    }
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
  // One transaction holding a transaction-level lock: a session lock taken and released by two
  // statements could be left behind on a server connection of a transaction pooler.
  await withClient(url, (c) =>
    c.query(
      `BEGIN; SELECT pg_advisory_xact_lock(hashtext('${QUEUE_SCHEMA}.migrate')); ${OWN_TABLES} COMMIT;`,
    ),
  );
}

/** Whether the queue exists within a few seconds (another process is committing it). */
async function queueAppears(boss: PgBoss): Promise<boolean> {
  for (let i = 0; i < 25; i++) {
    if (await boss.getQueue(QUEUE_NAME)) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

/** One short-lived connection. */
export async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url, application_name: 'geo-sync-queue' });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Whether the queue schema exists (without creating it). */
export async function queueExists(db: Pick<pg.ClientBase, 'query'>): Promise<boolean> {
  const r = await db.query<{ ok: boolean }>('SELECT to_regclass($1) IS NOT NULL AS ok', [
    `${QUEUE_SCHEMA}.backfills`,
  ]);
  return Boolean(r.rows[0]?.ok);
}

export interface JobStateRow {
  id: string;
  state: 'created' | 'retry' | 'active' | 'completed' | 'cancelled' | 'failed';
  data: JobData;
  retry_count: number;
  message: string | null;
  /**
   * Found only in pg-boss's archive. An archived job in an open state (created, retry, active)
   * will never run: pg-boss archived it past its keep_until. It is lost, not pending.
   */
  archived: boolean;
}

/** Every job of a backfill, wherever pg-boss keeps it now (the live table or the archive). */
export async function backfillJobs(
  db: Pick<pg.ClientBase, 'query'>,
  backfill: string,
): Promise<JobStateRow[]> {
  const cols = `id::text AS id, state::text AS state, data, retry_count,
    COALESCE(output->>'message', output->'value'->>'message') AS message`;
  const r = await db.query<JobStateRow>(
    `SELECT ${cols}, false AS archived FROM ${QUEUE_SCHEMA}.job WHERE name = $1 AND data->>'backfill' = $2
     UNION ALL
     SELECT ${cols}, true AS archived FROM ${QUEUE_SCHEMA}.archive a WHERE name = $1 AND data->>'backfill' = $2
       AND NOT EXISTS (SELECT 1 FROM ${QUEUE_SCHEMA}.job j WHERE j.name = a.name AND j.id = a.id)`,
    [QUEUE_NAME, backfill],
  );
  return r.rows;
}

/** Jobs not finished yet: queued, waiting for a retry, or taken by a worker. */
export const isOpen = (state: JobStateRow['state']): boolean =>
  state === 'created' || state === 'retry' || state === 'active';

/** Open but archived by pg-boss: it will never run (see JobStateRow.archived). */
export const isLost = (j: Pick<JobStateRow, 'state' | 'archived'>): boolean => j.archived && isOpen(j.state);

/** Jobs a worker may still run. */
export const isPending = (j: Pick<JobStateRow, 'state' | 'archived'>): boolean =>
  isOpen(j.state) && !j.archived;
