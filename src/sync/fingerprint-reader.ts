/**
 * The stored fingerprints each unit needs (change detection), read for many units in one query:
 * the units that ask while a read is in flight are served together by the next one, as the
 * GroupWriter commits for many units at once. On DuckDB a query costs milliseconds of the one
 * connection the warehouse has, whatever it returns: a re-sync of 42 unchanged units spent a
 * third of its time on their 42 reads. A unit's answer always comes from a read that began after
 * it asked, so it is as fresh as a query of its own would be.
 */
import type { Warehouse } from '../load/warehouse.ts';
import { unitKey } from './planner.ts';

interface Waiting {
  unit: { task_id: number; date: string };
  resolve: (m: Map<number, string>) => void;
  reject: (e: unknown) => void;
}

export class FingerprintReader {
  private waiting: Waiting[] = [];
  private reading: Promise<void> | null = null;

  constructor(
    private readonly warehouse: Pick<Warehouse, 'completeFingerprints'>,
    /** Units per query at most (two parameters each). */
    private readonly maxUnits = 200,
  ) {}

  /** The unit's stored executions with complete children: prompt_task_id -> fingerprint. */
  read(task_id: number, date: string): Promise<Map<number, string>> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ unit: { task_id, date }, resolve, reject });
      this.reading ??= this.drain();
    });
  }

  private async drain(): Promise<void> {
    // Units asking in the same turn join the first read.
    await Promise.resolve();
    while (this.waiting.length > 0) {
      const take = this.waiting.splice(0, this.maxUnits);
      try {
        const found = await this.warehouse.completeFingerprints(take.map((w) => w.unit));
        for (const w of take) w.resolve(found.get(unitKey(w.unit)) ?? new Map());
      } catch (e) {
        for (const w of take) w.reject(e);
      }
    }
    this.reading = null;
  }
}
