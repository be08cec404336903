/**
 * Finding the records that make a write fail, by bisection. A write of several records (one
 * transaction) that failed because of the values of some of them (Warehouse.dataError says so)
 * is tried again in halves, each a write of its own, and a half that fails again is halved in
 * turn, down to single records: a record whose write fails alone is handed to `failed`, and every
 * other record is written. Nothing of this runs until a write has failed: a write that succeeds
 * costs no statement more. For n records of which one is bad, each of the ceil(log2 n) levels
 * tries two halves: 2 * ceil(log2 n) writes after the failed one (one more when that write held
 * more than the records, so that they are first tried together again).
 *
 * A failure that is not a data error (a lost connection, fence or lock, an interruption) stops
 * the search at once and is thrown: no record is retried or quarantined for it. A record is only
 * ever given up after it failed alone, never because a larger write that held it failed (the
 * failure may have been another record's, or the values of two records together).
 */

/** A write's failure that the values of its records caused, with what the database said. */
export interface DataFailure {
  error: unknown;
  reason: string;
}

export interface IsolateOptions<T> {
  /** Writes the records given, all or nothing (one transaction). */
  write: (records: readonly T[]) => Promise<void>;
  /** The database's message when the error was caused by the records' values, else null. */
  dataError: (error: unknown) => string | null;
  /** A record whose write failed alone with a data error: it is not written. */
  failed: (record: T, failure: DataFailure) => void | Promise<void>;
  /**
   * The failure of writing exactly `records`, nothing else in the transaction, when known: they
   * are then split at once (a single record given up). Without it, `records` are first written
   * together once more: the failure may have been something else's in their transaction.
   */
  failure?: DataFailure;
}

/**
 * Writes what can be written of `records`, whose write together failed (or may fail) because of
 * some of their values; hands each record that fails alone to `failed`. See the header.
 */
export async function isolateFailures<T>(records: readonly T[], o: IsolateOptions<T>): Promise<void> {
  /** Writes `part`; its data failure, or null when written. Any other failure is thrown. */
  const attempt = async (part: readonly T[]): Promise<DataFailure | null> => {
    try {
      await o.write(part);
      return null;
    } catch (error) {
      const reason = o.dataError(error);
      if (reason === null) throw error;
      return { error, reason };
    }
  };
  /** `part`, whose own write failed with `failure` (written first when null), narrowed down. */
  const narrow = async (part: readonly T[], failure: DataFailure | null): Promise<void> => {
    if (part.length === 0) return;
    const failed = failure ?? (await attempt(part));
    if (!failed) return;
    if (part.length === 1) return o.failed(part[0]!, failed);
    const middle = Math.ceil(part.length / 2);
    for (const half of [part.slice(0, middle), part.slice(middle)]) await narrow(half, null);
  };
  await narrow(records, o.failure ?? null);
}
