/**
 * One export at a time per output folder: `DIR/.geo-sync-export.lock`, the lock file the DuckDB
 * warehouse uses (load/duckdb/lock-file.ts): created with O_EXCL, taken over when its holder is
 * surely gone (same host, its process dead or restarted). Two exports into one folder (from two
 * warehouses, or two from one PostgreSQL) would otherwise interleave their moves, and an export
 * could not tell the scratch folder of a killed export from a live one's: holding the lock, every
 * scratch folder in DIR but its own is a stopped export's, and it removes them (files.ts).
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { LockFile } from '../load/duckdb/lock-file.ts';

/** Another export writes into the folder now (exit 4, as a held warehouse lock). */
export class ExportDirLockedError extends Error {
  readonly code = 'EXPORT_DIR_LOCKED';
  constructor(
    readonly dir: string,
    readonly holder: string | undefined,
  ) {
    super(
      `another geo-sync export writes into ${dir}${holder ? `: ${holder}` : ''} (run it again once that export is done)`,
    );
    this.name = 'ExportDirLockedError';
  }
}

export const EXPORT_LOCK_FILE = '.geo-sync-export.lock';

/** Takes the folder's lock or throws ExportDirLockedError; the caller unlocks it when done. */
export async function lockExportDir(out: string): Promise<LockFile> {
  const lock = new LockFile(join(out, EXPORT_LOCK_FILE));
  const holder = `geo-sync export pid ${process.pid} on ${hostname()} since ${new Date().toISOString()}`;
  const r = await lock.tryLock(holder);
  if (!r.acquired) throw new ExportDirLockedError(out, r.holder);
  return lock;
}
