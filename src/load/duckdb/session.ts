/**
 * One Warehouse's DuckDB connection. Every public operation runs inside `exclusive`, the
 * database's mutex, so callers may call concurrently: statements of one transaction never
 * interleave with another's, on this connection or another Warehouse's on the same file.
 */
import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  DuckDBResultReader,
  LIST,
  VARCHAR,
  listValue,
  type DuckDBConnection,
  type DuckDBMaterializedResult,
  type DuckDBPreparedStatement,
  type DuckDBType,
  type DuckDBValue,
} from './node-api.ts';
import { abortReason } from '../../abort.ts';
import { isColumnValues, type ColumnValues, type Param } from '../core/driver.ts';
import type { SharedDatabase } from './database.ts';
import { readRows } from './values.ts';

/**
 * Parameterized statements kept prepared per connection, by their text. DuckDB parses, binds
 * and plans a statement each time it is prepared, and @duckdb/node-api prepares every statement
 * with parameters anew (and splits its text first): 3-4 ms of a write transaction's 4-6 ms
 * marker insert or stored-execution lookup, measured inside a transaction that appended rows
 * (prepared once and bound again: 2.6 ms). DuckDB binds a kept statement again by itself when
 * the catalog changed since (a migration) or a value's type did.
 *
 * Kept: a statement met a second time, with at most PREPARED_MAX_PARAMS parameters (lists are one
 * each, a column of rows too), PREPARED_KEPT of them. A run's hot statements are few and their
 * texts fixed; a statement whose text grows with its rows is mostly met once. Keeping every
 * statement met (each with its plan and, until the next bind, its values; the multi-row VALUES
 * statements of that time had a text per row count) put ~25 MB on a 10,000-execution sync's peak
 * RSS; 64 statements of up to 32 parameters ~13 MB (medians of 3 alternated syncs,
 * 409 against 396 MB); these limits measured within the noise (403 against 396 MB). A statement
 * not kept runs as before, through @duckdb/node-api's own path (several statements in one text
 * included: DuckDB prepares one statement at a time).
 */
const PREPARED_KEPT = 32;
const PREPARED_MAX_PARAMS = 16;
/** Texts met once, remembered up to this many (then forgotten at once: a cheap bound). */
const SEEN_ONCE = 512;

interface Kept {
  readonly statement: DuckDBPreparedStatement;
  busy: boolean;
}

export class Session {
  private stop: AbortSignal | undefined;
  private offStop: (() => void) | undefined;
  /** Least recently used first (a Map keeps insertion order; a use re-inserts). */
  private readonly prepared = new Map<string, Kept>();
  private readonly seenOnce = new Set<string>();
  /** Texts DuckDB would not prepare alone (several statements): always run node-api's way. */
  private readonly neverKept = new Set<string>();

  constructor(
    readonly connection: DuckDBConnection,
    private readonly db: SharedDatabase,
  ) {}

  /**
   * Stops with `signal` (OpenWarehouseOptions.interruptOn): when it aborts, the statement running
   * on this connection is interrupted (DuckDB fails it with "INTERRUPT Error" and invalidates its
   * transaction, which is rolled back), and statements after it but ROLLBACK fail with its reason.
   */
  stopOn(signal: AbortSignal): void {
    const onAbort = () => this.connection.interrupt();
    this.stop = signal;
    signal.addEventListener('abort', onAbort, { once: true });
    this.offStop = () => signal.removeEventListener('abort', onAbort);
  }

  /** Throws the stop's reason once stopped, but for ROLLBACK (it ends what was cut short). */
  checkStop(sql?: string): void {
    if (this.stop?.aborted && !(sql !== undefined && /^\s*ROLLBACK\b/i.test(sql)))
      throw abortReason(this.stop);
  }

  /**
   * `work` (one statement) under the stop: refused once stopped, and its failure after the stop
   * (DuckDB's "INTERRUPT Error") reported as the stop's reason, an interruption.
   */
  async stoppable<T>(work: () => Promise<T>, sql?: string): Promise<T> {
    this.checkStop(sql);
    try {
      return await work();
    } catch (e) {
      if (this.stop?.aborted) throw abortReason(this.stop);
      throw e;
    }
  }

  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.db.mutex.run(fn);
  }

  /** Runs SQL (several statements allowed when there are no parameters); returns rows changed. */
  async run(sql: string, params?: readonly Param[]): Promise<number> {
    return (await this.stoppable(() => this.execute(sql, params), sql)).rowsChanged;
  }

  /** Rows of one statement, as objects of warehouse values. */
  async rows<T = Record<string, unknown>>(sql: string, params?: readonly Param[]): Promise<T[]> {
    const reader = new DuckDBResultReader(await this.stoppable(() => this.execute(sql, params), sql));
    await reader.readAll();
    return readRows(reader) as T[];
  }

  /** The statement's result: with parameters, on a statement kept prepared when there is one. */
  private execute(sql: string, params?: readonly Param[]): Promise<DuckDBMaterializedResult> {
    if (!params?.length) return this.connection.run(sql);
    const bound = params.map(toBound);
    const values = bound.map((b) => b.value);
    // DuckDB infers the type of a parameter whose entry is undefined.
    const types = bound.map((b) => b.type) as DuckDBType[];
    return this.withPrepared(
      sql,
      params.length,
      (p) => {
        p.bind(values, types);
        return p.run();
      },
      () => this.connection.run(sql, values, types),
    );
  }

  /**
   * `use` on `sql` kept prepared: from an earlier call, or prepared now when it qualifies (the
   * least recently used beyond PREPARED_KEPT let go). Otherwise `once`, node-api's own path: a
   * statement met for the first time, one with many parameters, one DuckDB cannot prepare alone
   * (several statements in one text), or one another caller (outside `exclusive`) is using. A
   * kept statement's values are cleared after each use; one whose run failed is let go, so a
   * failure never leaves a statement in a state the next call would meet.
   */
  private async withPrepared<T>(
    sql: string,
    paramCount: number,
    use: (p: DuckDBPreparedStatement) => Promise<T>,
    once: () => Promise<T>,
  ): Promise<T> {
    let kept = this.prepared.get(sql);
    if (kept && !kept.busy) {
      this.prepared.delete(sql);
      this.prepared.set(sql, kept);
    } else if (!kept && this.keeps(sql, paramCount)) {
      const statement = await this.prepareAlone(sql);
      // Another caller may have kept it while this one prepared: this one is not kept then.
      if (statement && this.prepared.has(sql)) statement.destroySync();
      else if (statement) {
        for (const [text, old] of this.prepared) {
          if (this.prepared.size < PREPARED_KEPT) break;
          if (old.busy) continue;
          this.prepared.delete(text);
          old.statement.destroySync();
        }
        kept = { statement, busy: false };
        this.prepared.set(sql, kept);
      }
    }
    if (!kept || kept.busy) return once();
    kept.busy = true;
    try {
      const result = await use(kept.statement);
      kept.statement.clearBindings();
      return result;
    } catch (e) {
      if (this.prepared.get(sql) === kept) this.prepared.delete(sql);
      kept.statement.destroySync();
      throw e;
    } finally {
      kept.busy = false;
    }
  }

  /**
   * `sql` prepared, or undefined when DuckDB refuses: several statements in one text (never kept
   * then), or any other failure, which the caller's `once` meets and reports as it always did.
   */
  private async prepareAlone(sql: string): Promise<DuckDBPreparedStatement | undefined> {
    try {
      return await this.connection.prepare(sql);
    } catch (e) {
      if (/multiple statements/i.test(String(e)) && this.neverKept.size < SEEN_ONCE) this.neverKept.add(sql);
      return undefined;
    }
  }

  /** Whether a statement not kept yet is to be: met before, with few parameters, one statement. */
  private keeps(sql: string, paramCount: number): boolean {
    if (paramCount > PREPARED_MAX_PARAMS || this.neverKept.has(sql)) return false;
    if (this.seenOnce.delete(sql)) return true;
    if (this.seenOnce.size >= SEEN_ONCE) this.seenOnce.clear();
    this.seenOnce.add(sql);
    return false;
  }

  /** BEGIN .. COMMIT around `fn`; ROLLBACK when it throws. Call inside `exclusive`. */
  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    await this.connection.run('BEGIN TRANSACTION');
    try {
      const result = await fn();
      await this.connection.run('COMMIT');
      return result;
    } catch (e) {
      await this.connection.run('ROLLBACK').catch(() => undefined);
      throw e;
    }
  }

  close(): void {
    this.offStop?.();
    for (const kept of this.prepared.values()) kept.statement.destroySync();
    this.prepared.clear();
    this.connection.closeSync();
  }
}

/**
 * A statement parameter as DuckDB binds it, and its bind type. A list goes in as its text,
 * `[1,2,3]` (VARCHAR), which the statement's cast parses in one call: every list parameter is
 * written `CAST($n AS BIGINT[])` or `CAST($n AS VARCHAR[])` (Driver.inIds, rollups.ts,
 * stale-units.ts, execution-batch.ts). Bound as a LIST, each item was a node-api call (2,000 ids:
 * 2-3 ms), and DuckDB ran the statement slower with the LIST constant: the four statements that
 * recompute a night's aggregates took 48-61 ms with LISTs, 32-42 ms with their texts, on the same
 * rows. A list whose items would not read back the same from a text (an id that is no safe
 * integer; a text that is no date: a comma, a quote, a space or the word NULL means something
 * there) is bound as a typed LIST, as before (typed: an empty list has no item type to infer).
 * A number that is no safe integer is a DOUBLE; other types are inferred (undefined). A column of
 * rows (ColumnValues) is always a typed LIST (columnBound).
 * (@duckdb/node-api binds every whole number past INTEGER as a BIGINT, so a double such as 1e300,
 * whole, failed its statement: "bigint out of int64 range".)
 */
function toBound(p: Param): { value: DuckDBValue; type: DuckDBType | undefined } {
  if (p === null || typeof p !== 'object')
    return { value: p, type: typeof p === 'number' && !Number.isSafeInteger(p) ? DOUBLE : undefined };
  if (isColumnValues(p)) return columnBound(p);
  const text = listText(p);
  if (text !== undefined) return { value: text, type: VARCHAR };
  return isTextList(p)
    ? { value: listValue([...p]), type: TEXT_LIST }
    : { value: listValue(p.map((id) => BigInt(id))), type: ID_LIST };
}

const ID_LIST = LIST(BIGINT);
const COLUMN_LIST = { double: LIST(DOUBLE), boolean: LIST(BOOLEAN), text: LIST(VARCHAR) } as const;

/**
 * A column of rows (statements.ts insertListsSql), bound as a typed LIST of what it holds: the
 * statement casts it as its column (a list's text would read a comma, a quote or NULL in a text
 * differently). Whole numbers as BIGINTs; a column of them holding a fraction or a number past
 * 2^53 as DOUBLEs, cast by the statement as each value's scalar DOUBLE was.
 */
function columnBound(p: ColumnValues): { value: DuckDBValue; type: DuckDBType } {
  if (p.items === 'bigint') {
    const whole = p.values.every((v) => v === null || Number.isSafeInteger(v));
    if (whole)
      return {
        value: listValue(p.values.map((v) => (v === null ? null : BigInt(v as number)))),
        type: ID_LIST,
      };
    return { value: listValue([...p.values]), type: COLUMN_LIST.double };
  }
  return { value: listValue([...p.values]), type: COLUMN_LIST[p.items] };
}
const TEXT_LIST = LIST(VARCHAR);
/** The texts a list is bound as text with: dates. */
const DATE_TEXT = /^\d{4}-\d{2}-\d{2}$/;

/** A non-empty list of texts (an empty list is an id list: it has no item to tell). */
const isTextList = (p: readonly number[] | readonly string[]): p is readonly string[] =>
  typeof p[0] === 'string';

/** The list as DuckDB's list text, when every item reads back the same from it. */
function listText(p: readonly number[] | readonly string[]): string | undefined {
  if (isTextList(p)) {
    for (const item of p) if (typeof item !== 'string' || !DATE_TEXT.test(item)) return undefined;
  } else {
    for (const id of p) if (!Number.isSafeInteger(id)) return undefined;
  }
  return `[${p.join(',')}]`;
}
