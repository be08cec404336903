/**
 * The baseline of the own-cost scenario: the exact requests a pipeline run sent, replayed by a
 * bare undici loop (a Pool with the same connections, as many workers, the same headers), every
 * body read to its end and discarded with `body.dump()`. No validation, no transform, no warehouse, no queue.
 *
 * With `parse`, every body is instead read as text and parsed with JSON.parse, as the pipeline
 * must at the least: the floor any pipeline that reads the data pays, for telling the cost of
 * parsing (fixed by the bodies' size) from the cost of everything geo-sync does after it.
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import type { RecordedRequest } from './pipeline.ts';
import { BENCH_API_KEY, machineBusySeconds } from './simulator.ts';

export interface BareRun {
  wallMs: number;
  requests: number;
  /** Answers other than 200 (should be 0: the same URLs the pipeline read successfully). */
  non200: number;
  cpuSeconds: number;
  simulatorCpuSeconds: number | null;
  /** Busy CPU seconds of the whole machine during the run, or null. */
  machineBusySeconds: number | null;
}

export async function runBareLoop(
  baseUrl: string,
  requests: readonly RecordedRequest[],
  concurrency: number,
  simulatorCpu?: () => number | null,
  opts: { parse?: boolean } = {},
): Promise<BareRun> {
  const origin = new URL(baseUrl).origin;
  const pool = new Pool(origin, { connections: concurrency, pipelining: 1, keepAliveTimeout: 30_000 });
  const headers = {
    accept: 'application/json',
    'user-agent': 'geo-sync',
    authorization: `Bearer ${BENCH_API_KEY}`,
  };
  let next = 0;
  let non200 = 0;
  const worker = async () => {
    for (let i = next++; i < requests.length; i = next++) {
      const r = requests[i]!;
      const res = await pool.request({
        origin,
        path: r.path,
        method: r.method === 'POST' ? 'POST' : 'GET',
        headers,
      });
      if (res.statusCode !== 200) non200++;
      if (opts.parse) {
        JSON.parse(await res.body.text());
        continue;
      }
      // dump() destroys the socket past `limit` (default 128 KiB); read every body to its end
      // as the pipeline does, so the connection is kept alive.
      await res.body.dump({ limit: Number.MAX_SAFE_INTEGER });
    }
  };
  try {
    const machineBefore = machineBusySeconds();
    const simBefore = simulatorCpu?.() ?? null;
    const cpuBefore = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(Array.from({ length: concurrency }, worker));
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpuBefore);
    const simAfter = simulatorCpu?.() ?? null;
    const machineAfter = machineBusySeconds();
    return {
      wallMs,
      requests: requests.length,
      non200,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      simulatorCpuSeconds: simBefore !== null && simAfter !== null ? simAfter - simBefore : null,
      machineBusySeconds:
        machineBefore !== null && machineAfter !== null ? machineAfter - machineBefore : null,
    };
  } finally {
    await pool.close();
  }
}
