/**
 * Where the load scenario's adapter time goes: the same rows written through
 * Warehouse.writeExecutionBatch, with the database drivers' entry points wrapped to time every
 * statement (multi-statement strings are run one statement at a time, in the same transaction),
 * every Appender flush and every COPY. Not part of `npm run bench`; a tool for the note.
 *
 *   node --import tsx bench/diagnose-load.ts [duckdb|postgres] [--executions N] [--units N]
 *
 * `--units N` spreads the executions over N units (platform task, day), as the load scenario's
 * first read of many small units does.
 */
import { performance } from 'node:perf_hooks';
import { DuckDBAppender, DuckDBConnection, DuckDBDataChunk, DuckDBPreparedStatement } from '@duckdb/node-api';
import pg from 'pg';
import { generateLoadData } from './load-data.ts';
import { adapterLoad, adapterLoadDuckdb } from './load.ts';
import { withDatabase } from './postgres.ts';

const args = process.argv.slice(2);
const dialect = args.includes('postgres') ? 'postgres' : 'duckdb';
const at = args.indexOf('--executions');
const executions = at >= 0 ? Number(args[at + 1]) : 10_000;
const unitsAt = args.indexOf('--units');
const units = unitsAt >= 0 ? Number(args[unitsAt + 1]) : undefined;

const spent = new Map<string, { n: number; ms: number }>();
function add(label: string, ms: number): void {
  const s = spent.get(label) ?? { n: 0, ms: 0 };
  s.n++;
  s.ms += ms;
  spent.set(label, s);
}

/** A short label for a statement: its verb and the tables it names. */
function label(sql: string): string {
  const s = sql.replace(/\s+/g, ' ').trim();
  const verb = /^\w+( \w+)?/.exec(s)?.[0]?.toUpperCase() ?? '?';
  const tables = [...new Set(s.match(/\b(geo|temp\.main|pg_temp)\.\w+/g) ?? [])].slice(0, 3).join(', ');
  return `sql ${verb} ${tables}`.trim();
}

function wrapDuckdb(): void {
  const proto = DuckDBConnection.prototype as unknown as Record<
    string,
    (...a: unknown[]) => Promise<unknown>
  >;
  const run = proto.run!;
  proto.run = async function (this: unknown, sql: unknown, ...rest: unknown[]) {
    const text = String(sql);
    const parts =
      rest.length === 0 || rest[0] === undefined ? text.split(/;\s*\n/).filter((p) => p.trim()) : [text];
    let result: unknown;
    for (const part of parts) {
      const t0 = performance.now();
      result = await run.call(this, part, ...rest);
      add(label(part), performance.now() - t0);
    }
    return result;
  };
  const timeSync = (obj: Record<string, unknown>, name: string, as: string) => {
    const orig = obj[name] as (...a: unknown[]) => unknown;
    obj[name] = function (this: unknown, ...a: unknown[]) {
      const t0 = performance.now();
      try {
        return orig.apply(this, a);
      } finally {
        add(as, performance.now() - t0);
      }
    };
  };
  const appender = DuckDBAppender.prototype as unknown as Record<string, unknown>;
  timeSync(appender, 'appendDataChunk', 'appender appendDataChunk');
  timeSync(appender, 'flushSync', 'appender flushSync (writes the rows)');
  timeSync(appender, 'closeSync', 'appender closeSync');
  timeSync(
    DuckDBDataChunk.prototype as unknown as Record<string, unknown>,
    'setColumns',
    'chunk setColumns (JS -> vectors)',
  );
  // Statements with parameters run prepared (kept per connection: src/load/duckdb/session.ts):
  // each run timed under its statement's label (runAndReadAll runs it), its preparation apart.
  const sqlOf = new WeakMap<object, string>();
  const prepare = proto.prepare!;
  proto.prepare = async function (this: unknown, sql: unknown, ...rest: unknown[]) {
    const t0 = performance.now();
    const statement = (await prepare.call(this, sql, ...rest)) as object;
    add('prepare (parse, bind, plan)', performance.now() - t0);
    sqlOf.set(statement, String(sql));
    return statement;
  };
  const prepared = DuckDBPreparedStatement.prototype as unknown as Record<
    string,
    (...a: unknown[]) => Promise<unknown>
  >;
  for (const name of ['run'] as const) {
    const orig = prepared[name]!;
    prepared[name] = async function (this: object, ...a: unknown[]) {
      const t0 = performance.now();
      try {
        return await orig.apply(this, a);
      } finally {
        add(label(sqlOf.get(this) ?? '?'), performance.now() - t0);
      }
    };
  }
  const createAppender = proto.createAppender!;
  proto.createAppender = async function (this: unknown, ...a: unknown[]) {
    const t0 = performance.now();
    try {
      return await createAppender.apply(this, a);
    } finally {
      add('createAppender', performance.now() - t0);
    }
  };
}

function wrapPostgres(): void {
  const proto = pg.Client.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
  const query = proto.query!;
  proto.query = function (this: unknown, q: unknown, ...rest: unknown[]) {
    const t0 = performance.now();
    const text = typeof q === 'string' ? q : String((q as { text?: unknown }).text ?? '');
    const out = query.call(this, q, ...rest) as unknown;
    const l = label(text);
    if (out && typeof (out as Promise<unknown>).then === 'function') {
      (out as Promise<unknown>).then(
        () => add(l, performance.now() - t0),
        () => add(l, performance.now() - t0),
      );
    } else if (out && typeof (out as NodeJS.EventEmitter).once === 'function') {
      // A COPY stream: done when PostgreSQL acknowledged it.
      (out as NodeJS.EventEmitter).once('finish', () => add(l, performance.now() - t0));
    }
    return out;
  };
}

const data = generateLoadData(executions, 200, undefined, units);
process.stdout.write(
  `${dialect}: ${data.executions} executions, ${data.rows} rows in ${data.batches.length} batches\n`,
);
if (dialect === 'duckdb') wrapDuckdb();
else wrapPostgres();
const run =
  dialect === 'duckdb'
    ? await adapterLoadDuckdb(data)
    : await withDatabase('diagnose_load', (url) => adapterLoad(url, data));
const rows = [...spent.entries()].sort((a, b) => b[1].ms - a[1].ms);
const total = run.wallMs;
process.stdout.write(
  `adapter: ${(total / 1000).toFixed(2)} s, ${Math.round(run.rowsPerSecond)} rows/s (timing wrappers on)\n`,
);
for (const [l, s] of rows.slice(0, 30)) {
  process.stdout.write(
    `${((s.ms / total) * 100).toFixed(1).padStart(5)}%  ${s.ms.toFixed(0).padStart(6)} ms  ${String(s.n).padStart(5)}x  ${l}\n`,
  );
}
