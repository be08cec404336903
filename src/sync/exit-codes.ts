/** Exit codes: scripts and schedulers branch on these (README documents them). */
export const EXIT = {
  /** Everything synced. */
  success: 0,
  /** The run failed: nothing more can be trusted than what the run log says. */
  failure: 1,
  /** Bad command-line arguments or configuration. */
  usage: 2,
  /** The run finished, but some records were quarantined or some units failed. */
  partial: 3,
  /**
   * Another geo-sync process holds the warehouse lock (or the DuckDB file, or the export folder);
   * or other sessions held the tables a due migration alters through all its tries.
   */
  locked: 4,
  /** Stopped by SIGINT/SIGTERM; finished units are kept. */
  interrupted: 130,
} as const;

export function exitCodeOf(status: string): number {
  switch (status) {
    case 'success':
      return EXIT.success;
    case 'partial':
      return EXIT.partial;
    case 'interrupted':
      return EXIT.interrupted;
    default:
      return EXIT.failure;
  }
}
