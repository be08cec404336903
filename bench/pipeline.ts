/**
 * One run of the real pipeline (client -> validate -> transform -> warehouse) in this process,
 * from the compiled dist/, as `geo-sync sync --force` does it: config from loadConfig, createApi with an injected undici
 * Pool that records every request's method and path, openWarehouse + migrate (not timed), then
 * runLocked is timed. CPU seconds of this process (and of the simulator, when given) are taken
 * over the same interval.
 */
import { performance } from 'node:perf_hooks';
import { Pool, type Dispatcher } from 'undici';
// The compiled build, as `geo-sync sync` runs it (bin/bench.js rebuilds a stale dist/ first):
// tsx's transpiled sources wrap closures in `__name()` calls that the shipped code does not have.
import { createApi, runLocked } from '../dist/app.js';
import { loadConfig } from '../dist/config.js';
import { openWarehouse, RUN_DUCKDB_THREADS, type Warehouse, type Written } from '../dist/load/index.js';
import { silentLogger } from '../dist/log.js';
import type { RunSummary } from '../dist/sync/run.js';
import type { ExecutionBatch } from '../dist/transform/rows.js';
import { BENCH_API_KEY, machineBusySeconds, mainThreadCpuSeconds } from './simulator.ts';

export interface EnrichOverrides {
  taskConfig?: boolean;
  legacySources?: boolean;
  executionTimes?: boolean;
  diagnosis?: boolean;
  finance?: boolean;
  crossCheck?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  /** performance.now() when it was dispatched. */
  atMs: number;
}

/** Where the wall time of a run went, from the requests' start times. */
export interface Phases {
  /** Before the first task/results or task/prompts request: scope discovery, task config. */
  scope_s: number;
  /** From there to the last request of an execution (prompt/*, legacy task/*): the units. */
  units_s: number;
  /** After it: the last commits, site diagnoses, finance, the run log. */
  tail_s: number;
}

const UNIT_START = /\/geo\/task\/(results|prompts)\?/;
const EXECUTION_REQUEST = /\/geo\/(prompt\/|task\/(detail|searches)\?)/;

function phasesOf(recorded: readonly RecordedRequest[], t0: number, t1: number): Phases {
  const first = recorded.find((r) => UNIT_START.test(r.path))?.atMs ?? t0;
  const last = recorded.findLast((r) => EXECUTION_REQUEST.test(r.path))?.atMs ?? t1;
  return { scope_s: (first - t0) / 1000, units_s: (last - first) / 1000, tail_s: (t1 - last) / 1000 };
}

export interface PipelineOptions {
  baseUrl: string;
  /** `duckdb:<file>` or a postgres:// URL. */
  warehouse: string;
  date: string;
  /** Several days as one backfill (kind backfill); default `[date]`. */
  dates?: readonly string[];
  concurrency: number;
  enrich?: EnrichOverrides;
  /** CPU seconds of the simulator process so far (to report its share), if known. */
  simulatorCpu?: () => number | null;
  /**
   * The executions are read, validated and transformed as always, but the warehouse's
   * writeExecutionBatch and completeUnit resolve at once without writing: what the run would cost
   * if the load side cost nothing (the ceiling of any change there, such as writing from a worker
   * thread). Everything else (scope, task configuration, run log) is written as usual.
   */
  skipWrites?: boolean;
  /** With skipWrites: each batch the warehouse would have written (awaited, so it can push back). */
  onExecutionBatch?: (batch: ExecutionBatch) => Promise<void>;
}

/** The warehouse with its execution writes replaced by no-ops (PipelineOptions.skipWrites). */
function withoutExecutionWrites(
  warehouse: Warehouse,
  onBatch: (batch: ExecutionBatch) => Promise<void> = () => Promise.resolve(),
): Warehouse {
  return new Proxy(warehouse, {
    get(target, key) {
      // Written (in the product's sense): nothing stored, so no text value changed either.
      if (key === 'writeExecutionBatch')
        return async (batch: ExecutionBatch): Promise<Written> => {
          await onBatch(batch);
          return { textValuesChanged: 0 };
        };
      if (key === 'completeUnit') return () => Promise.resolve();
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

export interface PipelineRun {
  wallMs: number;
  requests: number;
  /** Every request the pipeline sent, in order. */
  recorded: RecordedRequest[];
  summary: RunSummary;
  /** CPU seconds of this process during the timed run (all threads: JS, DuckDB workers, GC). */
  cpuSeconds: number;
  /** CPU seconds of the main (JS) thread alone, or null off Linux. */
  mainThreadCpuSeconds: number | null;
  /** CPU seconds of the simulator process during the timed run, or null. */
  simulatorCpuSeconds: number | null;
  /** Rows written, all tables. */
  rows: number;
  /** Mean HTTP requests in flight over the timed run (at most the concurrency). */
  meanInflight: number;
  /** Share of the timed run with all `concurrency` requests in flight. */
  fullShare: number;
  phases: Phases;
  /** Busy CPU seconds of the whole machine (all processes, all cores) during the run, or null. */
  machineBusySeconds: number | null;
  /** The timed interval on process.hrtime's clock (µs), the clock of --cpu-prof samples. */
  window: { startUs: number; endUs: number };
}

/** Time-weighted requests in flight, from the dispatcher's point of view. */
export class InflightMeter {
  inflight = 0;
  max = 0;
  #area = 0;
  #full = 0;
  #last = performance.now();
  #start = this.#last;

  constructor(readonly capacity: number) {}

  #advance(): void {
    const now = performance.now();
    this.#area += this.inflight * (now - this.#last);
    if (this.inflight >= this.capacity) this.#full += now - this.#last;
    this.#last = now;
  }
  up(): void {
    this.#advance();
    this.inflight++;
    this.max = Math.max(this.max, this.inflight);
  }
  down(): void {
    this.#advance();
    this.inflight--;
  }
  /** Starts a new measuring interval. */
  reset(): void {
    this.#advance();
    this.#area = 0;
    this.#full = 0;
    this.#start = this.#last;
    this.max = this.inflight;
  }
  /** Mean requests in flight since reset(). */
  mean(): number {
    this.#advance();
    const span = this.#last - this.#start;
    return span > 0 ? this.#area / span : 0;
  }
  /** Share of the time since reset() with every connection busy. */
  fullShare(): number {
    this.#advance();
    const span = this.#last - this.#start;
    return span > 0 ? this.#full / span : 0;
  }
}

/**
 * Forwards every call of undici's dispatch-handler API to the pipeline's own handler, counting
 * the request out of flight when its response ends or fails. A plain forwarder, not undici's
 * `compose` + DecoratorHandler: those convert every response's headers to Buffers and parse them
 * back, instrumentation the bare loop would not pay (up to 4% of the pipeline's CPU in a profile
 * taken with them: samples under undici's wrap/decorator handlers and the old counting handler).
 */
class CountingHandler implements Dispatcher.DispatchHandler {
  #done = false;
  constructor(
    private readonly inner: Dispatcher.DispatchHandler,
    private readonly meter: InflightMeter,
  ) {}
  #finish(): void {
    if (!this.#done) {
      this.#done = true;
      this.meter.down();
    }
  }
  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.inner.onRequestStart?.(controller, context);
  }
  onRequestUpgrade(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestUpgrade']>>): void {
    this.inner.onRequestUpgrade?.(...args);
  }
  onResponseStart(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseStart']>>): void {
    this.inner.onResponseStart?.(...args);
  }
  onResponseData(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseData']>>): void {
    this.inner.onResponseData?.(...args);
  }
  onResponseEnd(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseEnd']>>): void {
    this.#finish();
    this.inner.onResponseEnd?.(...args);
  }
  onResponseError(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseError']>>): void {
    this.#finish();
    this.inner.onResponseError?.(...args);
  }
}

/** A Pool that records each request's method and path and counts it in flight. */
class RecordingPool extends Pool {
  readonly recorded: RecordedRequest[] = [];
  constructor(
    origin: string,
    opts: Pool.Options,
    readonly meter: InflightMeter,
  ) {
    super(origin, opts);
  }
  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    this.recorded.push({ method: opts.method, path: opts.path, atMs: performance.now() });
    this.meter.up();
    return super.dispatch(opts, new CountingHandler(handler, this.meter));
  }
}

/**
 * An undici Pool as the client's own (connections = concurrency, no pipelining), recording every
 * request's method and path and measuring how many are in flight.
 */
export function recordingDispatcher(
  origin: string,
  connections: number,
): { dispatcher: Dispatcher; recorded: RecordedRequest[]; meter: InflightMeter; close(): Promise<void> } {
  const meter = new InflightMeter(connections);
  const pool = new RecordingPool(origin, { connections, pipelining: 1, keepAliveTimeout: 30_000 }, meter);
  return { dispatcher: pool, recorded: pool.recorded, meter, close: () => pool.close() };
}

export async function runPipeline(o: PipelineOptions): Promise<PipelineRun> {
  const config = loadConfig({
    env: {},
    overrides: {
      baseUrl: o.baseUrl,
      apiKey: BENCH_API_KEY,
      warehouse: o.warehouse,
      concurrency: o.concurrency,
      requestsPerSecond: 100_000,
      logLevel: 'silent',
      enrich: { ...o.enrich },
    },
  });
  const rec = recordingDispatcher(new URL(o.baseUrl).origin, o.concurrency);
  const api = createApi(config, silentLogger, { dispatcher: rec.dispatcher });
  // As a run opens it (its DuckDB threads).
  const opened = await openWarehouse(config.warehouse, {
    logger: silentLogger,
    duckdb: { threads: RUN_DUCKDB_THREADS },
  });
  const warehouse = o.skipWrites ? withoutExecutionWrites(opened, o.onExecutionBatch) : opened;
  try {
    await warehouse.migrate();
    const simBefore = o.simulatorCpu?.() ?? null;
    const cpuBefore = process.cpuUsage();
    const mainBefore = mainThreadCpuSeconds();
    const machineBefore = machineBusySeconds();
    rec.meter.reset();
    const startUs = Number(process.hrtime.bigint() / 1000n);
    const t0 = performance.now();
    const dates = o.dates ?? [o.date];
    const summary = await runLocked(api, warehouse, config, silentLogger, {
      kind: dates.length > 1 ? 'backfill' : 'sync',
      dates,
      customers: config.customers,
      force: true,
      args: { dates: dates.join(','), bench: true },
      waitForLockMs: 0,
    });
    const wallMs = performance.now() - t0;
    const endUs = Number(process.hrtime.bigint() / 1000n);
    const meanInflight = rec.meter.mean();
    const fullShare = rec.meter.fullShare();
    const phases = phasesOf(rec.recorded, t0, t0 + wallMs);
    const machineAfter = machineBusySeconds();
    const cpu = process.cpuUsage(cpuBefore);
    const mainAfter = mainThreadCpuSeconds();
    const simAfter = o.simulatorCpu?.() ?? null;
    if (summary.status !== 'success') {
      throw new Error(
        `the bench sync ended ${summary.status}: ${summary.error ?? JSON.stringify(summary.failedUnits.slice(0, 3))}`,
      );
    }
    return {
      wallMs,
      requests: api.client.stats.requests,
      recorded: rec.recorded,
      summary,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      mainThreadCpuSeconds: mainBefore !== null && mainAfter !== null ? mainAfter - mainBefore : null,
      simulatorCpuSeconds: simBefore !== null && simAfter !== null ? simAfter - simBefore : null,
      rows: Object.values(summary.counters.rows).reduce((a, b) => a + b, 0),
      meanInflight,
      fullShare,
      phases,
      machineBusySeconds:
        machineBefore !== null && machineAfter !== null ? machineAfter - machineBefore : null,
      window: { startUs, endUs },
    };
  } finally {
    await warehouse.close();
    await api.close();
    await rec.close();
  }
}
