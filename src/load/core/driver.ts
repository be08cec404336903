/**
 * What a dialect provides to the warehouse core (core/warehouse.ts): a connection that runs
 * statements and bulk-loads rows, transactions, the lock, and the few SQL spellings that
 * differ. Everything else (the batch merge, closing units, upserts, reads, the run log,
 * migrations) is written once in core/, as SQL generated from the table description
 * (../tables.ts) with `$n` parameters.
 */
import type { Json } from '../../transform/rows.ts';
import type { ColumnKind, TableSpec } from '../tables.ts';
import type { Dialect, Fence, LockMode, LockResult } from '../warehouse.ts';

/**
 * A statement parameter: a scalar, a list of ids (see Driver.inIds; SQL `BIGINT[]`), a list of
 * texts (SQL `VARCHAR[]`, e.g. days to cast), or a column of rows (ColumnValues).
 */
export type Param = null | boolean | number | string | readonly number[] | readonly string[] | ColumnValues;

/**
 * One column of many rows as one list parameter, which the statement casts to the column's type
 * and unnests (statements.ts insertListsSql). `items`: the kind of column the list is bound as,
 * whole numbers (bigint), numbers (double), booleans or texts (every other kind of column is cast
 * from its text, as a scalar parameter is).
 */
export interface ColumnValues {
  readonly items: Extract<ColumnKind, 'bigint' | 'double' | 'boolean' | 'text'>;
  readonly values: readonly (null | number | boolean | string)[];
}

/** Whether a parameter is a column of rows. */
export function isColumnValues(p: Param): p is ColumnValues {
  return p !== null && typeof p === 'object' && !Array.isArray(p);
}

export type LoadMode = 'insert' | 'upsert';

export interface Connection {
  /** Runs SQL (several statements allowed when there are no parameters); returns rows changed. */
  execute(sql: string, params?: readonly Param[]): Promise<number>;
  /** Rows of one statement, as objects of warehouse values (../values.ts). */
  rows<T = Record<string, unknown>>(sql: string, params?: readonly Param[]): Promise<T[]>;
  /**
   * Bulk-loads `rows` into geo.<spec.table> (PostgreSQL COPY, DuckDB Appender), inside the
   * caller's transaction. `insert` fails on an existing key (Driver.isDuplicateKey tells);
   * `upsert` overwrites the spec's other columns (and synced_at) of an existing key.
   */
  load<R>(spec: TableSpec<R>, rows: readonly R[], mode: LoadMode): Promise<void>;
}

export interface TransactionOptions {
  /**
   * The transaction bulk-loads execution batches (PostgreSQL: its staging tables are made
   * ready first, and the planner is told to use the indexes).
   */
  readonly bulk?: boolean;
}

/**
 * How a migration waits for the tables it alters. A lock request that waits holds up every query
 * of those tables that comes after it (PostgreSQL queues them behind it): a migration behind an
 * hour-long export would stall the dashboards for that hour. So each try waits at most
 * `timeoutMs`, and between tries the queued queries run for `pauseMs`; after `attempts` tries the
 * migration gives up (MigrationLockTimeoutError) with nothing of it applied.
 */
export interface SchemaLockWait {
  readonly timeoutMs: number;
  readonly attempts: number;
  readonly pauseMs: number;
}

/** Where other sessions can hold the tables a migration alters (PostgreSQL): how to wait for them. */
export interface SchemaLocks {
  readonly wait: SchemaLockWait;
  /** Ends a pause between tries at once, with its reason (the process is stopping). */
  readonly stop?: AbortSignal;
  /** Bounds how long each lock the rest of `c`'s transaction asks for is waited for: wait.timeoutMs. */
  limit(c: Connection): Promise<void>;
  /** Whether `error` is a statement that gave up waiting for a lock (limit). */
  timedOut(error: unknown): boolean;
}

export interface Driver {
  readonly dialect: Dialect;
  /** Safe to log (no password). */
  readonly description: string;
  /** The SQL type of each column kind (what parameters are cast to). */
  readonly types: Readonly<Record<ColumnKind, string>>;

  /** A predicate: `column` is one of the ids of the list parameter `$n`. */
  inIds(column: string, n: number): string;
  /** Whether `error` is a primary-key violation (the batch merge's cue for its safe path). */
  isDuplicateKey(error: unknown): boolean;
  /**
   * When `error` was caused by the values of the rows written (a value its column's type
   * refuses, a NOT NULL or CHECK constraint, a row over a size limit; not a duplicate key, which
   * isDuplicateKey tells), what the database said, naming the table and column where it does;
   * null for any other failure. Warehouse.dataError.
   */
  dataError(error: unknown): string | null;

  /** `fn` in one transaction on one connection: COMMIT when it resolves, ROLLBACK when it throws. */
  transaction<T>(fn: (c: Connection) => Promise<T>, opts?: TransactionOptions): Promise<T>;
  /** `fn` on one connection, outside a transaction (each statement commits on its own). */
  connection<T>(fn: (c: Connection) => Promise<T>): Promise<T>;
  /** Runs the migrations `fn` (DuckDB: with its column cache cleared around them). */
  withMigrationLock<T>(c: Connection, fn: () => Promise<T>): Promise<T>;
  /**
   * After a transaction that changed the schema, outside any transaction: makes the change
   * durable beyond the WAL where that matters (DuckDB: checkpointed into the file).
   */
  checkpointSchema?(c: Connection): Promise<void>;
  /**
   * Takes the migration lock until the end of the transaction open on `c` (PostgreSQL:
   * pg_advisory_xact_lock, which a transaction pooler cannot leave behind); absent where the
   * process is alone on the database anyway (DuckDB).
   */
  lockMigrations?(c: Connection): Promise<void>;
  /**
   * How each migration's transaction waits for the tables it alters (see SchemaLockWait); absent
   * where no other session can hold them (DuckDB).
   */
  readonly schemaLocks?: SchemaLocks;
  /** One read-only report query; `$1`-style parameters. */
  query(sql: string, params: readonly Json[]): Promise<Record<string, unknown>[]>;

  /**
   * Opens what the lock needs and checks it can be held, without taking it (PostgreSQL: the
   * lock's connection is a session of its own, not a transaction pooler's: a UsageError says
   * what to set).
   */
  prepareLock?(): Promise<void>;
  /** The no-overlap lock (PostgreSQL advisory lock, DuckDB lock file). */
  tryLock(holder: string, mode?: LockMode): Promise<LockResult>;
  unlock(): Promise<void>;
  /**
   * The check that the lock is still held, for write transactions to run before COMMIT; null
   * while no lock is held or where holding it is already proven otherwise (DuckDB: one process
   * per file).
   */
  lockFence?(): Fence | null;
  /** Tells `listener` when the lock is lost without unlock (PostgreSQL: its connection died). */
  onLockLost?(listener: (cause: unknown) => void): () => void;
  /** Closes connections (the lock is released first by the core). */
  close(): Promise<void>;
}
