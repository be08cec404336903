// The memory floor of DuckDB in this process model: a child process that does nothing but store a
// day's rows in a fresh, migrated DuckDB warehouse (the product's settings: its buffer pool, its
// checkpoint threshold, a run's threads), through the product's own fastest path (the Appender
// straight into the keyed geo tables, DuckDBDriver's `insert`), one transaction per batch the
// sync's writer would commit. No HTTP, no validation, no queue, and garbage collected after every transaction (node
// --expose-gc): what DuckDB costs in a Node process with the least JavaScript around it. A sync of
// the same day holds all of this plus its pipeline. (Not a bound to the MB: DuckDB's allocator and
// V8 size themselves partly by timing, so two runs of either differ by some tens of MB.)
//
//   node --expose-gc --import ./bench/rss-reporter.mjs bench/duckdb-floor.mjs <file.duckdb>  < batches.ndjson
//
// Plain JavaScript on dist/, like the CLI the memory scenario measures: tsx alone would add about
// 50 MB of resident memory. Each stdin line is one ExecutionBatch as JSON (the bench generates
// them from a pipeline run, bench/duckdb-floor.ts). On the end of input it prints one JSON line:
// the rows per table, as DuckDB counts them, and how many transactions, of at most how many
// executions, stored them. GEO_FLOOR_MEMORY_LIMIT sets another buffer pool size (DuckDB's syntax).
import { prepareBatch } from '../dist/load/batch.js';
import { DuckDBDriver } from '../dist/load/duckdb/driver.js';
import { openWarehouse, RUN_DUCKDB_THREADS } from '../dist/load/index.js';
import {
  EXECUTION_PRODUCTS,
  EXECUTION_RANKS,
  EXECUTION_SCREENSHOTS,
  EXECUTION_SOURCES,
  PRODUCT_CARDS,
  PROMPT_EXECUTIONS,
} from '../dist/load/tables.js';
import { silentLogger } from '../dist/log.js';

const COLLECTIONS = [
  ['executions', PROMPT_EXECUTIONS],
  ['ranks', EXECUTION_RANKS],
  ['sources', EXECUTION_SOURCES],
  ['screenshots', EXECUTION_SCREENSHOTS],
  ['products', EXECUTION_PRODUCTS],
  ['cards', PRODUCT_CARDS],
];

/**
 * The lines of `input`, read a chunk at a time: the stream's own iterator does not read ahead, so
 * the pipe's backpressure holds the sender back (readline's iterator queues every line it has
 * read). A line's pieces are joined once, at its end: a line is a whole batch, hundreds of KB.
 */
async function* lines(input) {
  input.setEncoding('utf8');
  let pieces = [];
  for await (const chunk of input) {
    let from = 0;
    for (let nl = chunk.indexOf('\n'); nl >= 0; nl = chunk.indexOf('\n', from)) {
      pieces.push(chunk.slice(from, nl));
      const line = pieces.join('');
      pieces = [];
      if (line) yield line;
      from = nl + 1;
    }
    if (from < chunk.length) pieces.push(chunk.slice(from));
  }
  const last = pieces.join('');
  if (last) yield last;
}

const path = process.argv[2];
if (!path) throw new Error('usage: duckdb-floor.mjs <file.duckdb> < batches.ndjson');
const memoryLimit = process.env.GEO_FLOOR_MEMORY_LIMIT;

// The schema, as `geo-sync sync` creates it; closed again so the driver below is the only user.
const warehouse = await openWarehouse(`duckdb:${path}`, { logger: silentLogger, migrate: true });
await warehouse.close();

// The settings of a run (its DuckDB threads), as the sync it is the floor of.
const driver = await DuckDBDriver.open({
  path,
  settings: { threads: RUN_DUCKDB_THREADS, ...(memoryLimit ? { memoryLimit } : {}) },
});
try {
  const transactions = { count: 0, maxExecutions: 0 };
  for await (const line of lines(process.stdin)) {
    const batch = JSON.parse(line);
    transactions.count++;
    transactions.maxExecutions = Math.max(transactions.maxExecutions, batch.executions.length);
    // The rows the sync's writer stores: each collection deduplicated by its key, kept children left out.
    const rows = prepareBatch(batch);
    await driver.transaction(async (c) => {
      for (const [key, spec] of COLLECTIONS) await c.load(spec, rows[key], 'insert');
    });
    // The least JavaScript heap there can be: no batch outlives its transaction (node --expose-gc).
    globalThis.gc?.();
  }
  const rows = {};
  await driver.connection(async (c) => {
    for (const [, spec] of COLLECTIONS) {
      const [r] = await c.rows(`SELECT count(*)::INTEGER AS n FROM geo.${spec.table}`);
      rows[spec.table] = Number(r.n);
    }
  });
  process.stdout.write(`${JSON.stringify({ rows, transactions })}\n`);
} finally {
  await driver.close();
}
