/**
 * Writes into a warehouse behind geo-sync's back, as a tampering user or a bug would: the
 * Warehouse's query() is read-only for reports, so this goes through the dialect's own client.
 */
import type { Driver } from '../../src/load/core/driver.ts';
import type { Warehouse } from '../../src/load/warehouse.ts';

export async function damage(target: string, sql: string, params: (string | number)[] = []): Promise<void> {
  if (!target.startsWith('duckdb:')) {
    const pg = (await import('pg')).default;
    const c = new pg.Client(target);
    await c.connect();
    try {
      await c.query(sql, params);
    } finally {
      await c.end();
    }
    return;
  }
  const { DuckDBInstance } = await import('@duckdb/node-api');
  // Attached under another name: a file called geo.duckdb opened directly makes `geo.` ambiguous.
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    await c.run(`ATTACH '${target.replace(/^duckdb:/, '').replace(/'/g, "''")}' AS wh`);
    await c.run('USE wh');
    await c.run(sql, params);
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

/**
 * The same edit of a warehouse this process has open: through its own connection (on DuckDB, a
 * second instance could not open the file this process holds).
 */
export async function damageOpen(w: Warehouse, sql: string): Promise<void> {
  const driver = (w as unknown as { driver?: Driver }).driver;
  if (!driver) throw new Error('damageOpen(): not a warehouse of the core (load/core/warehouse.ts)');
  await driver.connection((c) => c.execute(sql));
}
