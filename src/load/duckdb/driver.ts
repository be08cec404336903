/**
 * The DuckDB driver of the warehouse core (../core/driver.ts): one connection per warehouse on
 * a database instance shared by every warehouse of this process on the same file (database.ts),
 * all work serialized by that database's mutex (session.ts); the Appender for bulk loads
 * (staging.ts); a lock file for the no-overlap lock (lock-file.ts).
 */
import type { Json } from '../../transform/rows.ts';
import type { Connection, Driver, LoadMode, Param } from '../core/driver.ts';
import { insertSelectSql } from '../core/statements.ts';
import type { TableSpec } from '../tables.ts';
import type { LockResult } from '../warehouse.ts';
import {
  acquireDatabase,
  connect,
  releaseDatabase,
  type OpenOptions,
  type SharedDatabase,
} from './database.ts';
import { LockFile } from './lock-file.ts';
import { readOnlyQuery } from './query.ts';
import { Session } from './session.ts';
import { appendStaged, recreateStagingSql, selectStaged, SQL_TYPE, stagingTable } from './staging.ts';

const DUPLICATE_KEY = /Constraint Error: Duplicate key/;

class DuckDBConnection implements Connection {
  constructor(private readonly session: Session) {}

  execute(sql: string, params?: readonly Param[]): Promise<number> {
    return this.session.run(sql, params);
  }

  rows<T>(sql: string, params?: readonly Param[]): Promise<T[]> {
    return this.session.rows<T>(sql, params);
  }

  /** Appender into a fresh staging table, then INSERT ... SELECT with the CASTs the staging needs. */
  async load<R>(spec: TableSpec<R>, rows: readonly R[], mode: LoadMode): Promise<void> {
    if (rows.length === 0) return;
    await this.session.run(recreateStagingSql(spec));
    await appendStaged(this.session.connection, spec, rows);
    await this.session.run(insertSelectSql(spec, selectStaged(spec), stagingTable(spec), mode === 'upsert'));
  }
}

export interface DuckDBDriverOptions extends OpenOptions {
  /** Absolute path of the database file. */
  path: string;
}

export class DuckDBDriver implements Driver {
  readonly dialect = 'duckdb' as const;
  readonly description: string;
  readonly types = SQL_TYPE;
  private readonly connectionOf: DuckDBConnection;

  private constructor(
    private readonly db: SharedDatabase,
    private readonly session: Session,
    private readonly lock: LockFile,
  ) {
    this.description = `duckdb:${db.path}`;
    this.connectionOf = new DuckDBConnection(session);
  }

  static async open(opts: DuckDBDriverOptions): Promise<DuckDBDriver> {
    const db = await acquireDatabase(opts.path, opts);
    try {
      const session = new Session(await connect(db), db);
      return new DuckDBDriver(db, session, new LockFile(`${opts.path}.lock`));
    } catch (e) {
      releaseDatabase(db);
      throw e;
    }
  }

  /** DuckDB uses no ART index for `IN (subquery)`: the semi-join scans, zone maps help. */
  inIds(column: string, n: number): string {
    return `${column} IN (SELECT unnest(CAST($${n} AS BIGINT[])))`;
  }

  isDuplicateKey(error: unknown): boolean {
    return error instanceof Error && DUPLICATE_KEY.test(error.message);
  }

  transaction<T>(fn: (c: Connection) => Promise<T>): Promise<T> {
    return this.session.exclusive(() => this.session.transaction(() => fn(this.connectionOf)));
  }

  connection<T>(fn: (c: Connection) => Promise<T>): Promise<T> {
    return this.session.exclusive(() => fn(this.connectionOf));
  }

  /**
   * Nothing to take: migrations run inside the database's mutex (no other statement of this
   * process interleaves) and DuckDB's file lock keeps other processes out.
   */
  withMigrationLock<T>(_c: Connection, fn: () => Promise<T>): Promise<T> {
    return fn();
  }

  query(sql: string, params: readonly Json[]): Promise<Record<string, unknown>[]> {
    return readOnlyQuery(this.session, sql, params);
  }

  tryLock(holder: string): Promise<LockResult> {
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
