/**
 * The DuckDB driver of the warehouse core (../core/driver.ts): one connection per warehouse on
 * a database instance shared by every warehouse of this process on the same file (database.ts),
 * all work serialized by that database's mutex (session.ts); the Appender for bulk loads
 * (plain inserts straight into the geo table, direct.ts; upserts through a staging table,
 * staging.ts); a lock file for the no-overlap lock (lock-file.ts).
 */
import { timestampTZValue, type DuckDBTimestampTZValue } from './node-api.ts';
import type { Json } from '../../transform/rows.ts';
import { DIALECT_SQL } from '../dialect-sql.ts';
import type { Connection, Driver, LoadMode, Param } from '../core/driver.ts';
import { insertSelectSql } from '../core/statements.ts';
import type { TableSpec } from '../tables.ts';
import type { LockMode, LockResult } from '../warehouse.ts';
import {
  acquireDatabase,
  CHECKPOINT_SQL,
  connect,
  releaseDatabase,
  type OpenOptions,
  type SharedDatabase,
} from './database.ts';
import { duckdbDataError, duckdbIsDuplicateKey } from './errors.ts';
import { LockFile } from './lock-file.ts';
import { namingMemoryLimit } from './out-of-memory.ts';
import { readOnlyQuery } from './query.ts';
import { Session } from './session.ts';
import { appendDirect } from './direct.ts';
import { appendStaged, recreateStagingSql, selectStaged, SQL_TYPE, stagingTable } from './staging.ts';

/** Column names of geo tables in table order, by table (read once per driver). */
type TableColumns = Map<string, readonly string[]>;

/**
 * A connection for one transaction (or, outside one, for statements that commit on their own).
 * In a transaction, synced_at of direct loads is the transaction's now(), read once: the value
 * the column's DEFAULT now() gives the staging path's INSERT in the same transaction.
 */
class DuckDBConnection implements Connection {
  private syncedAt: Promise<DuckDBTimestampTZValue> | undefined;

  constructor(
    private readonly session: Session,
    private readonly tableColumns: TableColumns,
    private readonly inTransaction: boolean,
  ) {}

  execute(sql: string, params?: readonly Param[]): Promise<number> {
    return this.session.run(sql, params);
  }

  rows<T>(sql: string, params?: readonly Param[]): Promise<T[]> {
    return this.session.rows<T>(sql, params);
  }

  /**
   * `insert`: the Appender straight into the geo table (direct.ts), unless some value is not in
   * the form converted there. Otherwise (and for `upsert`): the Appender into a fresh staging
   * table, then INSERT ... SELECT with the CASTs the staging needs.
   */
  async load<R>(spec: TableSpec<R>, rows: readonly R[], mode: LoadMode): Promise<void> {
    if (rows.length === 0) return;
    if (mode === 'insert') {
      const columns = await this.columnsOf(spec.table);
      const now = () => this.now();
      const direct = () => appendDirect(this.session.connection, spec, rows, columns, now);
      if (await this.session.stoppable(direct)) return;
    }
    await this.session.run(recreateStagingSql(spec));
    await this.session.stoppable(() => appendStaged(this.session.connection, spec, rows));
    await this.session.run(insertSelectSql(spec, selectStaged(spec), stagingTable(spec), mode === 'upsert'));
  }

  private now(): Promise<DuckDBTimestampTZValue> {
    const read = async () => {
      const [row] = await this.session.rows<{ us: number | string }>('SELECT epoch_us(now()) AS us');
      return timestampTZValue(BigInt(row!.us));
    };
    if (!this.inTransaction) return read();
    this.syncedAt ??= read();
    return this.syncedAt;
  }

  /**
   * The table's column names in table order. Read for every geo table at once when one is
   * missing: duckdb_columns() costs 5-9 ms however narrow its filter, and a sync appends to six
   * tables (one read, not six, at each process's first write).
   */
  private async columnsOf(table: string): Promise<readonly string[]> {
    if (!this.tableColumns.has(table)) {
      const rows = await this.session.rows<{ table_name: string; name: string }>(
        `SELECT table_name, column_name AS name FROM duckdb_columns()
         WHERE database_name = current_database() AND schema_name = 'geo'
         ORDER BY table_name, column_index`,
      );
      // Cleared around migrations (withMigrationLock); appendDirect also checks the count.
      const read = new Map<string, string[]>([[table, []]]);
      for (const r of rows) {
        let columns = read.get(r.table_name);
        if (!columns) read.set(r.table_name, (columns = []));
        columns.push(r.name);
      }
      for (const [name, columns] of read) this.tableColumns.set(name, columns);
    }
    return this.tableColumns.get(table)!;
  }
}

export interface DuckDBDriverOptions extends OpenOptions {
  /** Absolute path of the database file. */
  path: string;
  /** Interrupts the statement in flight on abort, refuses later ones (Session.stopOn). */
  interruptOn?: AbortSignal;
}

export class DuckDBDriver implements Driver {
  readonly dialect = 'duckdb' as const;
  readonly description: string;
  readonly types = SQL_TYPE;
  private readonly tableColumns: TableColumns = new Map();

  private constructor(
    private readonly db: SharedDatabase,
    private readonly session: Session,
    private readonly lock: LockFile,
  ) {
    this.description = `duckdb:${db.path}`;
  }

  static async open(opts: DuckDBDriverOptions): Promise<DuckDBDriver> {
    const db = await acquireDatabase(opts.path, opts);
    try {
      const session = new Session(await connect(db), db);
      if (opts.interruptOn) session.stopOn(opts.interruptOn);
      return new DuckDBDriver(db, session, new LockFile(`${opts.path}.lock`));
    } catch (e) {
      releaseDatabase(db);
      throw e;
    }
  }

  inIds(column: string, n: number): string {
    return DIALECT_SQL.duckdb.inIds(column, n);
  }

  isDuplicateKey(error: unknown): boolean {
    return duckdbIsDuplicateKey(error);
  }

  dataError(error: unknown): string | null {
    return duckdbDataError(error);
  }

  /**
   * Every statement of this driver runs in one of these three (transaction, connection, query):
   * where DuckDB's out-of-memory error becomes one naming GEO_DUCKDB_MEMORY_LIMIT.
   */
  transaction<T>(fn: (c: Connection) => Promise<T>): Promise<T> {
    return namingMemoryLimit(this.db.memoryLimit, () =>
      this.session.exclusive(() =>
        this.session.transaction(() => fn(new DuckDBConnection(this.session, this.tableColumns, true))),
      ),
    );
  }

  connection<T>(fn: (c: Connection) => Promise<T>): Promise<T> {
    return namingMemoryLimit(this.db.memoryLimit, () =>
      this.session.exclusive(() => fn(new DuckDBConnection(this.session, this.tableColumns, false))),
    );
  }

  /**
   * Nothing to take: migrations run inside the database's mutex (no other statement of this
   * process interleaves) and DuckDB's file lock keeps other processes out.
   */
  async withMigrationLock<T>(_c: Connection, fn: () => Promise<T>): Promise<T> {
    // Migrations may change tables: direct loads read their columns again afterwards.
    this.tableColumns.clear();
    try {
      return await fn();
    } finally {
      this.tableColumns.clear();
    }
  }

  /**
   * Checkpoints the schema changes just committed into the file (workaround of duckdb/duckdb#19712,
   * DuckDB 1.4-1.5): a file opened directly as the default database, as DuckDB's CLI and BI
   * drivers open it, cannot replay from its WAL an ALTER that changes the columns of a table with
   * a computed DEFAULT (ADD COLUMN, COMMENT ON COLUMN of a table with `synced_at DEFAULT now()`):
   * "INTERNAL Error: Failure while replaying WAL file ... no default database set". geo-sync
   * ATTACHes the file and replays it, but a process killed after migrating, before DuckDB's first
   * checkpoint (64MB of WAL), left a file only geo-sync could open.
   *
   * Best effort: the change is committed either way (in the WAL, which the next checkpoint, the
   * close or the next open writes into the file: database.ts), so a failing checkpoint does not
   * fail the migration; a stop does.
   */
  async checkpointSchema(c: Connection): Promise<void> {
    try {
      await c.execute(CHECKPOINT_SQL);
    } catch {
      this.session.checkStop();
    }
  }

  query(sql: string, params: readonly Json[]): Promise<Record<string, unknown>[]> {
    return namingMemoryLimit(this.db.memoryLimit, () => readOnlyQuery(this.session, sql, params));
  }

  /** One process per DuckDB file: a shared lock (workers need PostgreSQL) is as good as exclusive. */
  tryLock(holder: string, _mode?: LockMode): Promise<LockResult> {
    return this.lock.tryLock(holder);
  }
  unlock(): Promise<void> {
    return this.lock.unlock();
  }

  /** After any queued work: the connection and, last one out, the file. */
  async close(): Promise<void> {
    await this.session.exclusive(async () => this.session.close());
    releaseDatabase(this.db);
  }
}
