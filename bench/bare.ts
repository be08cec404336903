/**
 * The baseline of the own-cost scenario: the exact requests a pipeline run sent, replayed by a
 * bare undici loop (a Pool with the same connections, as many workers, the same headers), every
 * body read to its end and discarded with `body.dump()`. No validation, no transform, no warehouse, no queue.
 *
 * With `parse`, every body is instead read as text and parsed with JSON.parse, as the pipeline
 * must at the least: the floor any pipeline that reads the data pays, for telling the cost of
 * parsing (fixed by the bodies' size) from the cost of everything geo-sync does after it.
 *
 * With `validate`, every parsed body is also decoded by the client's own decoder for its endpoint
 * (GET_DECODERS: the zod schemas, items checked one by one): the floor of any pipeline held to
 * this project's rule that every response is validated by its schema the moment it arrives. No
 * queue, retries, transform or warehouse.
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { GET_DECODERS, type GetEndpoint } from '../dist/api/client-decoders.js';
import { ENDPOINTS, endpointId } from '../dist/api/endpoints.js';
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
  opts: { parse?: boolean; validate?: boolean } = {},
): Promise<BareRun> {
  const decoderOf = opts.validate ? decoderByPath() : null;
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
      if (decoderOf) {
        const body: unknown = JSON.parse(await res.body.text());
        decoderOf(r.path)(body);
        continue;
      }
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

/**
 * The client's decoder for a request path (`/api/v2/geo/task/results?...` -> the taskResults
 * decoder), matched on the endpoint's path template; throws on a path no GET decoder serves.
 */
function decoderByPath(): (path: string) => (body: unknown) => unknown {
  const routes = (Object.keys(GET_DECODERS) as GetEndpoint[]).map((name) => {
    const pattern = ENDPOINTS[name].path.replace(/\{\w+\}/g, '[^/]+');
    const decode = GET_DECODERS[name] as (body: unknown, ctx: object) => unknown;
    const ctx = { endpoint: endpointId(name), params: {}, onReject: () => undefined };
    return { re: new RegExp(`${pattern}$`), decode: (body: unknown) => decode(body, ctx) };
  });
  const cache = new Map<string, (body: unknown) => unknown>();
  return (path) => {
    const bare = path.split('?')[0]!;
    let d = cache.get(bare);
    if (!d) {
      d = routes.find((r) => r.re.test(bare))?.decode;
      if (!d) throw new Error(`bench: no GET decoder for ${bare}`);
      cache.set(bare, d);
    }
    return d;
  };
}
