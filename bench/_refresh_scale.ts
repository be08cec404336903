import { performance } from 'node:perf_hooks';
import { generateLoadData } from './load-data.ts';
import { openWarehouse } from '../src/load/index.ts';
import { silentLogger } from '../src/log.ts';
const path = process.argv[2]!;
const n = Number(process.argv[3] ?? 300000);
const fresh = process.argv[4] === 'build';
if (fresh) {
  const data = generateLoadData(n, 2000, undefined, n / 250);
  const w = await openWarehouse(`duckdb:${path}`, { logger: silentLogger, migrate: true, keepRollups: false });
  const t0 = performance.now();
  for (const b of data.batches) await w.writeExecutionBatch(b);
  console.log('built', n, ((performance.now() - t0) / 1000).toFixed(1), 's');
  await w.close();
  const w2 = await openWarehouse(`duckdb:${path}`, { logger: silentLogger });
  const t1 = performance.now();
  for (const b of (await import('../src/load/core/rollups.ts')).batchDays(await w2.rollupDays())) await w2.refreshRollups(b.from, b.to);
  console.log('refreshed all', ((performance.now() - t1) / 1000).toFixed(1), 's');
  await w2.close();
}
let w = await openWarehouse(`duckdb:${path}`, { logger: silentLogger });
for (const k of [1, 5, 40]) {
  const units = await w.query(`SELECT DISTINCT task_id, date_time AS date FROM geo.prompt_executions ORDER BY date DESC, task_id LIMIT ${k}`);
  const { DuckDBInstance } = await import('@duckdb/node-api');
  await w.close();
  const db = await DuckDBInstance.create(path);
  const c = await db.connect();
  for (const u of units) await c.run(`INSERT INTO geo.rollup_stale_units (task_id, date) VALUES (${Number(u.task_id)}, DATE '${String(u.date)}')`);
  c.closeSync(); db.closeSync();
  w = await openWarehouse(`duckdb:${path}`, { logger: silentLogger });
  const t = performance.now();
  const r = await w.refreshStaleRollups();
  console.log(`refresh of ${k} units (${r.executions} exec): ${(performance.now() - t).toFixed(0)} ms`);
}
await w.close();
