/**
 * A hand edit of an open warehouse, as a user with psql or the duckdb CLI would make one:
 * Warehouse.query is read-only (for reports), so the edit goes through the warehouse's own
 * connection (on DuckDB, a second instance could not open the file this process holds).
 */
import type { Driver } from '../../src/load/core/driver.ts';
import type { Warehouse } from '../../src/load/warehouse.ts';

export async function damage(w: Warehouse, sql: string): Promise<void> {
  const driver = (w as unknown as { driver?: Driver }).driver;
  if (!driver) throw new Error('damage(): not a warehouse of the core (load/core/warehouse.ts)');
  await driver.connection((c) => c.execute(sql));
}
