/** Errors to exit codes: one clear line and the code that tells the error's kind. */
import { InvalidArgumentError, type Command } from 'commander';
import { isInterruption } from '../abort.ts';
import { ConfigError } from '../config.ts';
import { UsageError } from '../errors.ts';
import { ExportDirLockedError } from '../export/lock.ts';
import { outOfMemoryError } from '../load/duckdb/out-of-memory.ts';
import { MigrationLockTimeoutError, WarehouseLockedError } from '../load/errors.ts';
import { scrubSecrets } from '../log.ts';
import { EXIT } from '../sync/exit-codes.ts';
import { LockHeldError } from '../sync/lock.ts';

/** Turns any error into one clear message and the exit code that tells its kind. */
export function exitOnError(e: unknown, command?: Command): never {
  if (isInterruption(e)) {
    // Stopped on purpose (SIGINT/SIGTERM): whatever was waiting ended with the signal's reason.
    process.stderr.write(`${e instanceof Error ? e.message : 'interrupted'}\n`);
    process.exit(EXIT.interrupted);
  }
  if (e instanceof ConfigError) {
    for (const p of e.problems) process.stderr.write(`config: ${p}\n`);
    process.exit(EXIT.usage);
  }
  if (e instanceof UsageError || e instanceof InvalidArgumentError) {
    process.stderr.write(`error: ${scrubSecrets(e.message)}\n`);
    process.exit(EXIT.usage);
  }
  if (e instanceof LockHeldError) {
    process.stderr.write(`${e.message}\n`);
    process.exit(EXIT.locked);
  }
  if (e instanceof ExportDirLockedError) {
    process.stderr.write(`${e.message}\n`);
    process.exit(EXIT.locked);
  }
  if (e instanceof WarehouseLockedError) {
    // A DuckDB file is open in another process: the same situation as a held lock.
    process.stderr.write(
      `another process has the warehouse open${e.holder ? `: ${e.holder}` : ''} ` +
        // Only sync and backfill can wait; export, report, state... are simply run again later.
        (command?.options.some((o) => o.long === '--wait-for-lock')
          ? '(use --wait-for-lock to wait)\n'
          : '(run it again once that process is done)\n'),
    );
    process.exit(EXIT.locked);
  }
  if (e instanceof MigrationLockTimeoutError) {
    // Other sessions held the tables a migration alters: as with a held lock, run it again later.
    process.stderr.write(`error: ${e.message}\n`);
    process.exit(EXIT.locked);
  }
  // DuckDB out of its buffer pool, wherever it was wrapped: the one line naming the setting.
  const outOfMemory = outOfMemoryError(e);
  if (outOfMemory) {
    process.stderr.write(`error: ${outOfMemory.message}\n`);
    process.exit(EXIT.failure);
  }
  const message = e instanceof Error ? e.message : String(e);
  process.stderr.write(`error: ${scrubSecrets(message)}\n`);
  process.exit(EXIT.failure);
}
