/**
 * DuckDB database files, opened once per process. DuckDB lets one process at a time open a file
 * read-write, and does not stop the same process from opening it twice (two instances would
 * corrupt it): so every Warehouse on a file shares one DuckDBInstance, counted by reference,
 * and one mutex that serializes their work. Opening a file another process holds is retried
 * with backoff for a few seconds before giving up with a clear error.
 *
 * The file is ATTACHed to an in-memory instance under the fixed name CATALOG (and each
 * connection USEs it) rather than opened directly: opened directly, DuckDB names the catalog
 * after the file, and a file called `geo.duckdb` makes every `geo.<table>` ambiguous between
 * catalog `geo` and schema `geo`.
 */
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DuckDBInstance, quotedString, type DuckDBConnection } from './node-api.ts';
import { WarehouseLockedError } from '../errors.ts';
import { Mutex } from '../mutex.ts';
import { LockFile } from './lock-file.ts';
import { isDuckDBOutOfMemory, withMemoryLimit } from './out-of-memory.ts';

export interface SharedDatabase {
  readonly path: string;
  readonly instance: DuckDBInstance;
  /** Serializes every statement of this process on this file. */
  readonly mutex: Mutex;
  /** The buffer pool's limit the instance runs with (DuckDB's syntax), named when it runs out. */
  readonly memoryLimit: string;
}

interface Entry {
  opening: Promise<SharedDatabase>;
  refs: number;
}

const open = new Map<string, Entry>();

/** The catalog name the database file is attached as. */
export const CATALOG = 'warehouse';

/** Writes what the WAL holds into the file (the open's repair, DuckDBDriver.checkpointSchema). */
export const CHECKPOINT_SQL = `CHECKPOINT ${CATALOG}`;

/**
 * WAL size that triggers a checkpoint (DuckDB's default is 16MB), and the buffer pool's size.
 * Chosen together from a sync of a 100k-execution day (1.8M rows; peak RSS, wall time, what
 * `duckdb_memory()` held at its peak), so that a day's sync stays within a small machine:
 *
 * | memory_limit | checkpoint | peak RSS | wall   | DuckDB held (spilled)      |
 * |--------------|------------|----------|--------|----------------------------|
 * | 256MB        | 256MB      | 577 MB   | 92.8 s | 244 MB (74 MB)             |
 * | 128MB        | 64MB       | 497 MB   | 76.0 s | 122 MB (151 MB)            |
 * | 64MB         | 256MB      | 438 MB   | 118.7 s| 61 MB (174 MB)             |
 * | 64MB         | 32MB       | 416 MB   | 82.8 s | 61 MB (189 MB)             |
 *
 * Uncheckpointed rows stay in memory (or spill) until a checkpoint writes them to the file, so a
 * small pool wants frequent checkpoints; each checkpoint also rewrites the primary-key indexes,
 * which is why the threshold is not DuckDB's 16MB (20k executions loaded in 18.3 s at 16MB
 * against 11.1 s at 256MB). The machine was shared during these runs: wall times are +/-10%.
 * 64MB was tried and refused: DuckDB's CSV reader alone asks for a 30.5 MiB buffer per thread,
 * and the same limit serves `report` and ad hoc queries on the warehouse, which do not all spill.
 *
 * Measured again and kept (the bench's memory scenario, peak RSS of the
 * 10k / 100k day): the defaults 341-359 / 482-507 MB (6 and 4 runs); at 100k, one run each,
 * checkpoint 16MB or 32MB 527 / 520 MB (no gain: the peak is not the WAL), DuckDB's
 * allocator_flush_threshold 16MB with its background thread 480 MB, threads 1 526 MB (both within
 * the noise); memory_limit 64MB 325 / 436 MB (1.34x, and the refusal above stands). At the 100k
 * peak of one run, /proc/self/smaps put 156 MB in DuckDB's allocator mapping (its pool, full, plus
 * what it does not count), 128 MB in the V8 heap, ~90 MB in other anonymous memory (glibc's
 * per-thread arenas: MALLOC_ARENA_MAX=2 took 60 MB off, but only the environment of a new process
 * can set it) and 75 MB in the node and libduckdb binaries.
 * DuckDB's jemalloc keeps freed pages ~2 s (dirty_decay_ms and muzzy_decay_ms 1000, read with
 * DUCKDB_JE_MALLOC_CONF=stats_print:true). Both at 0 (that variable, README): 10k 308-316 MB,
 * 100k 400-410 MB, growth 1.30, but the bench's DuckDB load ratio fell from 0.53 to 0.41-0.45
 * (two runs each, alternated); a background purge at 200 ms saved 20 MB. Left to the user.
 *
 * A threshold of 1GB, measured against 64MB (DuckDB 1.5.5, the 100k day, three alternated pairs):
 * wall 166-189 s against 167-212 s, peak RSS 507 MB (all three) against 532-577 MB, the file 194
 * against 245-250 MB. But the WAL grew to 682 MB and the spills to ~500 MB (rows not yet
 * checkpointed go to the temp directory past the pool), and the open after a kill -9 replays the
 * whole WAL (552 MB: 15 s to open, replay and close). The bulk load of 300,000 executions in
 * transactions of 200 took 0.91x at 1GB: its checkpoints every 64MB cost 0.7-4.4 s each, 26% of
 * its time, but do not grow with the table: 0.7 s the first (160k rows), 1.1-2.5 s at 6M rows.
 * Kept at 64MB: a gain within the sync's noise does not pay for a day's WAL to replay after a
 * crash and a day's size in spills.
 */
export const DEFAULT_CHECKPOINT_THRESHOLD = '64MB';

/** How DuckDB may use the machine (the config's `duckdb` keys, GEO_DUCKDB_*). */
export interface DuckDBSettings {
  /** DuckDB's syntax, e.g. 1GB. @default 128MB */
  readonly memoryLimit?: string;
  /** WAL size that triggers a checkpoint, DuckDB's syntax. @default 64MB */
  readonly checkpointThreshold?: string;
  /** Where it spills. @default `<database file>.tmp` */
  readonly tempDirectory?: string | undefined;
  /** @default DuckDB's own (the machine's cores) */
  readonly threads?: number | undefined;
}

export interface OpenOptions {
  /** How long to keep retrying while another process holds the file. @default 5000 */
  readonly lockWaitMs?: number;
  /** Ends that wait at once (the process is stopping): the open rejects with its reason. */
  readonly signal?: AbortSignal | undefined;
  /** Told once, when another process holds the file and the wait begins. */
  readonly onWait?: (() => void) | undefined;
  /** Applied when this process first opens the file (later opens share that instance). */
  readonly settings?: DuckDBSettings;
}

export const DEFAULT_MEMORY_LIMIT = '128MB';

const LOCKED = /Could not set lock on file/i;

/** The database at `path` (absolute), opened or shared; release it with releaseDatabase. */
export function acquireDatabase(path: string, opts: OpenOptions = {}): Promise<SharedDatabase> {
  const existing = open.get(path);
  if (existing) {
    existing.refs++;
    return existing.opening;
  }
  const entry: Entry = {
    opening: openWithRetry(path, opts.lockWaitMs ?? 5000, opts.settings ?? {}, opts.signal, opts.onWait),
    refs: 1,
  };
  open.set(path, entry);
  entry.opening.catch(() => {
    if (open.get(path) === entry) open.delete(path);
  });
  return entry.opening;
}

/** Drops one reference; the last one closes the instance (checkpointing it). */
export function releaseDatabase(db: SharedDatabase): void {
  const entry = open.get(db.path);
  if (!entry) return;
  if (--entry.refs > 0) return;
  open.delete(db.path);
  db.instance.closeSync();
}

/** A connection to the shared database, with the warehouse catalog as its default. */
export async function connect(db: SharedDatabase): Promise<DuckDBConnection> {
  const connection = await db.instance.connect();
  try {
    await connection.run(`USE ${CATALOG}`);
  } catch (e) {
    connection.closeSync();
    throw e;
  }
  return connection;
}

async function openWithRetry(
  path: string,
  waitMs: number,
  settings: DuckDBSettings,
  signal: AbortSignal | undefined,
  onWait: (() => void) | undefined,
): Promise<SharedDatabase> {
  await mkdir(dirname(path), { recursive: true });
  const memoryLimit = settings.memoryLimit ?? DEFAULT_MEMORY_LIMIT;
  // DuckDB's buffer pool defaults to 80% of RAM and keeps what it touched: a long sync would
  // grow with the warehouse instead of the batch. Bounded, it spills to disk instead.
  const instance = await DuckDBInstance.create(':memory:', {
    memory_limit: memoryLimit,
    // Spills go beside the database, not into whatever directory the process was started in.
    temp_directory: settings.tempDirectory ?? `${path}.tmp`,
    ...(settings.threads !== undefined ? { threads: String(settings.threads) } : {}),
  });
  const connection = await instance.connect();
  const deadline = Date.now() + waitMs;
  // A WAL beside the file before the open: a process was killed before its checkpoint (or holds
  // the file, and the open waits). What the open replays is checkpointed into the file at once,
  // so that DuckDB's own clients open it even if this process is killed too: a WAL an older
  // release left may hold an ALTER they cannot replay (DuckDBDriver.checkpointSchema).
  const walLeft = existsSync(`${path}.wal`);
  try {
    for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
      try {
        // ATTACH takes no parameters: the path goes in as a DuckDB-quoted string literal.
        await connection.run(`ATTACH ${quotedString(path)} AS ${CATALOG}`);
        // Checked by the config's regex (a size such as 32MB): no quote can reach the statement.
        await connection.run(
          `SET checkpoint_threshold = '${settings.checkpointThreshold ?? DEFAULT_CHECKPOINT_THRESHOLD}'`,
        );
        // Best effort: the rows are replayed either way, and the close checkpoints them.
        if (walLeft) await connection.run(CHECKPOINT_SQL).catch(() => undefined);
        return { path, instance, mutex: new Mutex(), memoryLimit };
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        if (isDuckDBOutOfMemory(e)) throw withMemoryLimit(e, memoryLimit);
        if (!LOCKED.test(message) || Date.now() + delay > deadline)
          throw await openError(path, waitMs, message, e);
        if (delay === 50) onWait?.();
        await sleep(delay, undefined, signal ? { signal } : {}).catch((e: unknown) => {
          throw signal?.aborted ? (signal.reason ?? e) : e;
        });
      }
    }
  } catch (e) {
    instance.closeSync();
    throw e;
  } finally {
    connection.closeSync();
  }
}

/**
 * Removes a DuckDB warehouse: its database file and its write-ahead log (a WAL left beside a new
 * file would be replayed into it). Not while this process has it open.
 */
export async function removeDatabaseFiles(path: string): Promise<void> {
  if (open.has(path)) throw new Error(`DuckDB warehouse ${path} is open in this process`);
  for (const f of [path, `${path}.wal`]) await rm(f, { force: true });
}

async function openError(path: string, waitMs: number, message: string, cause: unknown): Promise<Error> {
  const locked = await lockedError(path, message, cause, `waited ${Math.round(waitMs / 100) / 10} s`);
  return locked ?? new Error(`cannot open DuckDB warehouse ${path}: ${message}`, { cause });
}

/**
 * DuckDB's answer when another process has the file open (`Could not set lock on file`), as a
 * WarehouseLockedError naming the holder: the geo-sync run that recorded itself in the lock file,
 * else the PID DuckDB names. Undefined for any other failure. Every command that opens the file
 * (sync, export, report...) reports a busy warehouse the same way, so scripts see exit 4.
 */
export async function lockedError(
  path: string,
  message: string,
  cause: unknown,
  detail?: string,
): Promise<WarehouseLockedError | undefined> {
  if (!LOCKED.test(message)) return undefined;
  // A geo-sync run holding the file also holds the lock file: name it, as tryLock would.
  const recorded = await new LockFile(`${path}.lock`).liveHolder().catch(() => undefined);
  const pid = /\(PID (\d+)\)/.exec(message)?.[1];
  const holder = recorded ?? (pid ? `process ${pid}` : undefined);
  return new WarehouseLockedError(
    `DuckDB warehouse ${path} is locked by another process (DuckDB allows one writer per file): ` +
      `${holder ?? 'unknown'}${recorded ? ' holds the warehouse lock' : ' has the file open'}` +
      (detail ? `; ${detail}` : ''),
    holder,
    { cause },
  );
}
