/**
 * The library entry point, imported by the package's own name (self-reference through
 * package.json `exports`, so this loads dist/ exactly as a dependent project would): a pipeline
 * against the simulator into a real DuckDB file, with a caller's logger and AbortSignal, and
 * nothing process-wide touched.
 */
import { existsSync, readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConfigError,
  createPipeline,
  GeoApiError,
  GeoClient,
  LockHeldError,
  openWarehouse,
  UnauthorizedError,
  UsageError,
} from 'geo-sync';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { createTempDuckDB, type TempDuckDB } from '../helpers/duckdb.ts';

describe("import { createPipeline } from 'geo-sync'", () => {
  let sim: RunningSimulator;
  let db: TempDuckDB;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 3, days: 3, executionsPerDay: 30 });
    db = createTempDuckDB('library');
  });
  afterAll(async () => {
    await sim?.close();
    db?.remove();
  });

  const baseConfig = () => ({
    baseUrl: sim.url,
    apiKey: 'sim-key',
    warehouse: db.target,
    concurrency: 16,
    requestsPerSecond: 10_000,
    lookbackDays: 0,
    enrich: { diagnosis: false },
  });

  it('package.json exports the built module and its declarations', () => {
    const root = new URL('../../', import.meta.url);
    const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
    expect(pkg.exports['.']).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' });
    const types = readFileSync(new URL(pkg.exports['.'].types, root), 'utf8');
    expect(types).toMatch(/export \{\s*createPipeline,/);
    expect(existsSync(new URL('dist/pipeline.d.ts', root))).toBe(true);
  });

  it('runs a pipeline into DuckDB with the caller’s logger, leaving the process as it was', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _enc, done) {
          for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
          done();
        },
      }),
    );
    const listeners = ['SIGINT', 'SIGTERM', 'exit'].map((e) => process.listenerCount(e));
    const [d0, d1] = sim.world.dates();
    const tasks = sim.world.allPlatformTasks().length;

    // The config file's keys, `$comment` included, as a caller would read them from the file.
    const pipeline = createPipeline({ $comment: 'from geo-sync.json', ...baseConfig() }, { logger });
    expect(pipeline.config.enrich).toMatchObject({ diagnosis: false, finance: true });
    let expected = 0;
    for (const t of sim.world.allPlatformTasks())
      for (const d of [d0!, d1!]) expected += [...sim.world.executions(t.task_id, d)].length;
    try {
      const first = await pipeline.run({ from: d0!, to: d1! });
      expect(first).toMatchObject({ status: 'success', dates: [d0, d1], error: null });
      expect(first.counters.unitsDone).toBe(2 * tasks);
      expect(first.counters.rows.prompt_executions).toBe(expected);
      expect(first.api.requests).toBeGreaterThan(0);

      // The same pipeline again: finished days are skipped, and its API figures are its own.
      const second = await pipeline.run({ from: d0! });
      expect(second).toMatchObject({ status: 'success', dates: [d0] });
      expect(second.counters).toMatchObject({ unitsDone: 0, unitsSkipped: tasks });
      expect(second.api.requests).toBeLessThan(first.api.requests);
    } finally {
      await pipeline.close();
    }

    expect(lines.some((l) => l.msg === 'plan' && typeof l.runId === 'string')).toBe(true);
    expect(JSON.stringify(lines)).not.toContain('sim-key');
    expect(['SIGINT', 'SIGTERM', 'exit'].map((e) => process.listenerCount(e))).toEqual(listeners);
    expect(process.exitCode).toBeUndefined();

    const w = await openWarehouse(db.target);
    try {
      expect((await w.counts()).prompt_executions).toBe(expected);
      const runs = await w.listRuns(5);
      expect(runs.map((r) => r.kind)).toEqual(['sync', 'backfill']);
    } finally {
      await w.close();
    }
  });

  it('stops on the caller’s AbortSignal and reports problems as typed errors', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop now'));
    const pipeline = createPipeline(baseConfig(), { signal: controller.signal });
    try {
      await expect(pipeline.run({ from: sim.world.dates()[0]! })).rejects.toThrow('stop now');
    } finally {
      await pipeline.close();
    }

    const other = createPipeline(baseConfig());
    try {
      await expect(other.run({ from: '2026-02-30' })).rejects.toBeInstanceOf(UsageError);
      await expect(other.run({ from: '2026-11-02', to: '2026-11-01' })).rejects.toThrow(/after to/);
    } finally {
      await other.close();
    }
    await expect(other.run({ from: '2026-11-01' })).rejects.toThrow(/closed/);

    expect(() => createPipeline({ ...baseConfig(), concurrency: 0 })).toThrow(ConfigError);
    expect(() => createPipeline({ warehouse: db.target })).toThrow(UsageError);

    // A refused key: the run ends 'failed' with the reason; the client alone throws the typed error.
    const refused = createPipeline({ ...baseConfig(), apiKey: 'wrong-key' });
    try {
      const s = await refused.run({ from: sim.world.dates()[0]! });
      expect(s.status).toBe('failed');
      expect(s.error).toMatch(/401|unauthori[sz]ed/i);
    } finally {
      await refused.close();
    }
    const client = new GeoClient({ baseUrl: sim.url, auth: { apiKey: 'wrong-key' } });
    try {
      const e = await client.balance().catch((err: unknown) => err);
      expect(e).toBeInstanceOf(UnauthorizedError);
      expect(e).toBeInstanceOf(GeoApiError);
      expect(JSON.stringify(e)).not.toContain('wrong-key');
    } finally {
      await client.close();
    }
    expect(LockHeldError.name).toBe('LockHeldError');
  });
});
