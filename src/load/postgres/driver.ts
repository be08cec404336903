/**
 * The PostgreSQL driver of the warehouse core (../core/driver.ts): a pg pool (value conventions
 * in type-parsers.ts), COPY for bulk loads (copy.ts; TEMP staging + ON CONFLICT for upserts),
 * a dedicated connection for the no-overlap lock (advisory-lock.ts).
 *
 * Nothing here relies on a session outliving a transaction, so the pool may go through a
 * connection pooler in transaction mode (PgBouncer): no named prepared statement, no SET but SET
 * LOCAL, staging tables made inside the transaction that uses them, the migration lock taken per
 * transaction. Only the lock needs a session (see advisory-lock.ts and GEO_LOCK_URL).
 */
import type { Logger } from 'pino';
import { DIALECT_SQL } from '../dialect-sql.ts';
import type pg from 'pg';
import type { Json } from '../../transform/rows.ts';
import {
  isColumnValues,
  type Connection,
  type Driver,
  type LoadMode,
  type Param,
  type SchemaLocks,
  type SchemaLockWait,
  type TransactionOptions,
} from '../core/driver.ts';
import { columnList, insertSelectSql } from '../core/statements.ts';
import { qualified, type ColumnKind, type TableSpec } from '../tables.ts';
import type { Fence, LockMode, LockResult } from '../warehouse.ts';
import { abortReason, stopWorkFinished, untilAborted } from '../../abort.ts';
import { UnreachableError } from '../../unreachable.ts';
import { AdvisoryLock, MIGRATION_LOCK_KEY } from './advisory-lock.ts';
import { cancelOnAbort } from './cancel.ts';
import { copyRows } from './copy.ts';
import { pgDataError, pgIsDuplicateKey } from './errors.ts';
import { connectFailure, createPool, withTransaction } from './pool.ts';
import { maskPassword } from '../target.ts';
import { ensureStagingSql, stagingTable } from './staging.ts';

/** Parameters as node-postgres sends them: a column of rows as its array (an array literal). */
function pgParams(params: readonly Param[] | undefined): unknown[] | undefined {
  return params?.map((p) => (isColumnValues(p) ? p.values : p));
}

/** The geo column type of each kind (sql/postgres/001_init.sql). */
export const SQL_TYPE: Record<ColumnKind, string> = {
  bigint: 'BIGINT',
  integer: 'INTEGER',
  double: 'DOUBLE PRECISION',
  boolean: 'BOOLEAN',
  text: 'TEXT',
  date: 'DATE',
  timestamptz: 'TIMESTAMPTZ',
  money: 'NUMERIC(18, 4)',
  json: 'JSONB',
};

/**
 * A bulk transaction runs with enable_seqscan off: its deletes and lookups always go by indexed
 * prompt_task_id or primary key, but on tables too fresh for autoanalyze the planner has no
 * statistics and would scan the whole table for every batch. (Staging tables have no index and
 * are scanned regardless.)
 */
const BEGIN_BULK = 'BEGIN; SET LOCAL enable_seqscan = off';

/**
 * The warehouse's stop (OpenWarehouseOptions.interruptOn) around one statement: refused once
 * stopped, but for ROLLBACK (it ends what was cut short), and its failure after the stop (the
 * cancelled query's "canceling statement due to user request") reported as the stop's reason.
 */
type Stoppable = <T>(work: () => Promise<T>, sql?: string) => Promise<T>;

function stoppable(signal: AbortSignal | undefined): Stoppable {
  return async (work, sql) => {
    if (signal?.aborted && !(sql !== undefined && /^\s*ROLLBACK\b/i.test(sql))) throw abortReason(signal);
    try {
      return await work();
    } catch (e) {
      if (signal?.aborted) throw abortReason(signal);
      throw e;
    }
  };
}

class PgConnection implements Connection {
  /** The staging tables this transaction made sure of. */
  private readonly staged = new Set<string>();

  constructor(
    private readonly client: pg.ClientBase,
    private readonly stoppable: Stoppable,
  ) {}

  async execute(sql: string, params?: readonly Param[]): Promise<number> {
    const r = await this.stoppable(() => this.client.query(sql, pgParams(params)), sql);
    return r.rowCount ?? 0;
  }

  async rows<T>(sql: string, params?: readonly Param[]): Promise<T[]> {
    const r = await this.stoppable(() => this.client.query(sql, pgParams(params)), sql);
    return r.rows as T[];
  }

  load<R>(spec: TableSpec<R>, rows: readonly R[], mode: LoadMode): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    return this.stoppable(async () => {
      if (mode === 'insert') return copyRows(this.client, qualified(spec), spec, rows);
      const stage = stagingTable(spec);
      if (!this.staged.has(stage)) {
        await this.client.query(ensureStagingSql(spec));
        this.staged.add(stage);
      }
      await copyRows(this.client, stage, spec, rows);
      await this.client.query(insertSelectSql(spec, columnList(spec), stagingTable(spec), true));
    });
  }
}

export interface PostgresDriverOptions {
  url: string;
  /** Safe to log: the URL with its password masked. */
  description: string;
  /** Where the lock is held (GEO_LOCK_URL): a direct URL of the same database. @default url */
  lockUrl?: string;
  logger: Logger;
  /** How messages name where `url` came from. @default "GEO_WAREHOUSE" */
  setting?: string;
  /** How messages name where `lockUrl` came from. @default "GEO_LOCK_URL" */
  lockSetting?: string;
  /** Ends the opening connection at once (the process is stopping). */
  signal?: AbortSignal;
  /**
   * On abort: the queries in flight are cancelled and every later statement but ROLLBACK fails
   * with its reason (OpenWarehouseOptions.interruptOn).
   */
  interruptOn?: AbortSignal;
  /** How a migration waits for the tables it alters. @default SCHEMA_LOCK_WAIT */
  schemaLockWait?: Partial<SchemaLockWait>;
}

/**
 * Each lock a try of a migration waits for, it waits for 5 s at most (GEO_MIGRATE_LOCK_TIMEOUT_MS:
 * PostgreSQL's lock_timeout bounds each lock request); six tries in all, 2 s apart (or as long as
 * a try's wait, when that is shorter): for a migration that waits at its first lock, about 40 s
 * before `migrate` (or the run that migrates) gives up with a message saying what to do. A
 * dashboard query that comes while a try waits is held up 5 s at most for each lock the try is
 * still to take (010 locks four tables, 011 five, the views' replacement each view).
 */
export const SCHEMA_LOCK_WAIT: SchemaLockWait = { timeoutMs: 5_000, attempts: 6, pauseMs: 2_000 };

/** The defaults, with what `wait` sets; a shorter try pauses as long as it waits. */
export function schemaLockWait(wait: Partial<SchemaLockWait> = {}): SchemaLockWait {
  // Whole milliseconds, at least one: lock_timeout 0 would wait without a bound.
  const timeoutMs = Math.max(1, Math.round(wait.timeoutMs ?? SCHEMA_LOCK_WAIT.timeoutMs));
  return {
    timeoutMs,
    attempts: wait.attempts ?? SCHEMA_LOCK_WAIT.attempts,
    pauseMs: wait.pauseMs ?? Math.min(SCHEMA_LOCK_WAIT.pauseMs, timeoutMs),
  };
}

/** PostgreSQL's lock_not_available: a statement gave up waiting for a lock (lock_timeout). */
const LOCK_NOT_AVAILABLE = '55P03';

export class PostgresDriver implements Driver {
  readonly dialect = 'postgres' as const;
  readonly description: string;
  readonly types = SQL_TYPE;
  private readonly pool: pg.Pool;
  private readonly lock: AdvisoryLock;
  private readonly stoppable: Stoppable;
  private readonly offStop: () => void;
  readonly schemaLocks: SchemaLocks;

  private constructor(opts: PostgresDriverOptions) {
    this.description = opts.description;
    // A pooled connection that dies (server restart, idle timeout) must not crash the process.
    this.pool = createPool(opts.url, (err) => opts.logger.warn({ err }, 'PostgreSQL connection closed'));
    this.lock = new AdvisoryLock(opts.lockUrl ?? opts.url, opts.logger, {
      pool: this.pool,
      setting: opts.lockUrl ? 'GEO_LOCK_URL' : 'GEO_WAREHOUSE',
      label: opts.lockUrl ? (opts.lockSetting ?? 'GEO_LOCK_URL') : (opts.setting ?? 'GEO_WAREHOUSE'),
      description: opts.lockUrl ? maskPassword(opts.lockUrl) : opts.description,
      signal: opts.signal ?? opts.interruptOn,
    });
    this.stoppable = stoppable(opts.interruptOn);
    this.offStop = cancelOnAbort(this.pool, opts.interruptOn);
    const wait = schemaLockWait(opts.schemaLockWait);
    this.schemaLocks = {
      wait,
      ...(opts.interruptOn ? { stop: opts.interruptOn } : {}),
      // lock_timeout for the rest of the transaction (set_config's `true`: SET LOCAL).
      limit: (c) =>
        c
          .execute("SELECT set_config('lock_timeout', $1, true)", [`${wait.timeoutMs}ms`])
          .then(() => undefined),
      timedOut: (e) => (e as { code?: unknown } | null)?.code === LOCK_NOT_AVAILABLE,
    };
  }

  /**
   * Connects (one round trip, so a wrong URL fails here rather than mid-sync). A server that
   * cannot be reached is named by its setting (UnreachableError); `signal` ends the wait at once.
   */
  static async open(opts: PostgresDriverOptions): Promise<PostgresDriver> {
    const d = new PostgresDriver(opts);
    try {
      await untilAborted(d.pool.query('SELECT 1'), opts.signal);
    } catch (e) {
      d.offStop();
      // Stopped while connecting: the connection still being opened is not waited for.
      if (opts.signal?.aborted) {
        void d.pool.end().catch(() => undefined);
        throw e;
      }
      await d.pool.end().catch(() => undefined);
      const setting = opts.setting ?? 'GEO_WAREHOUSE';
      const reason = connectFailure(e, opts.url);
      if (reason)
        throw new UnreachableError(setting, `PostgreSQL at ${opts.description}`, reason, { cause: e });
      throw new Error(
        `${setting}: cannot connect to PostgreSQL warehouse ${opts.description}: ${(e as Error).message}`,
        { cause: e },
      );
    }
    return d;
  }

  inIds(column: string, n: number): string {
    return DIALECT_SQL.postgres.inIds(column, n);
  }

  isDuplicateKey(error: unknown): boolean {
    return pgIsDuplicateKey(error);
  }

  dataError(error: unknown): string | null {
    return pgDataError(error);
  }

  transaction<T>(fn: (c: Connection) => Promise<T>, opts: TransactionOptions = {}): Promise<T> {
    return withTransaction(
      this.pool,
      (client) => fn(new PgConnection(client, this.stoppable)),
      opts.bulk ? { begin: BEGIN_BULK } : {},
    );
  }

  async connection<T>(fn: (c: Connection) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      return await fn(new PgConnection(client, this.stoppable));
    } finally {
      client.release();
    }
  }

  /**
   * Nothing held across the migrations: a session lock taken and released by two statements may
   * be taken on one server connection and left there by a transaction pooler. Each migration
   * transaction takes the lock for itself instead (lockMigrations).
   */
  withMigrationLock<T>(_c: Connection, fn: () => Promise<T>): Promise<T> {
    return fn();
  }

  /** The migration lock until the end of `c`'s transaction. */
  async lockMigrations(c: Connection): Promise<void> {
    await c.execute('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
  }

  /** Opens the lock's connection and checks it can hold the lock (advisory-lock.ts). */
  prepareLock(): Promise<void> {
    return this.lock.prepare();
  }

  /** A report query in a READ ONLY transaction. */
  query(sql: string, params: readonly Json[]): Promise<Record<string, unknown>[]> {
    return this.stoppable(() =>
      withTransaction(
        this.pool,
        async (client) => (await client.query(sql, params as unknown[])).rows as Record<string, unknown>[],
        { begin: 'BEGIN TRANSACTION READ ONLY' },
      ),
    );
  }

  tryLock(holder: string, mode?: LockMode): Promise<LockResult> {
    return this.lock.tryLock(holder, mode);
  }
  lockFence(): Fence | null {
    return this.lock.fence();
  }
  onLockLost(listener: (cause: unknown) => void): () => void {
    return this.lock.onLost(listener);
  }
  unlock(): Promise<void> {
    return this.lock.unlock();
  }
  async close(): Promise<void> {
    this.offStop();
    // A cancel the stop sent ends before its pool does (cancel.ts: PgBouncer 1.18).
    await stopWorkFinished();
    await this.pool.end();
  }
}
