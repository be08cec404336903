/** Shared helpers of the simulator tests: JSON over the real socket, fixed clocks. */
import type { RunningSimulator } from '../../src/simulator/index.ts';

/** 2025-06-15 10:00 in Asia/Shanghai (02:00 UTC): yesterday is 2025-06-14. */
export const NOW = new Date('2025-06-15T02:00:00Z');
export const YESTERDAY = '2025-06-14';
export const TODAY = '2025-06-15';

export interface JsonReply {
  status: number;
  headers: Headers;
  body: unknown;
  /** `body` as a loose record, for reading fields in assertions. */
  json: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface CallOptions {
  method?: 'GET' | 'POST';
  body?: unknown;
  /** Bearer token; null sends no Authorization header. Default the simulator's default key. */
  token?: string | null;
  /** Raw body text (overrides `body`). */
  raw?: string;
}

export async function call(sim: RunningSimulator, path: string, opts: CallOptions = {}): Promise<JsonReply> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = opts.token === undefined ? 'sim-key' : opts.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let payload: string | undefined;
  if (opts.raw !== undefined) payload = opts.raw;
  else if (opts.body !== undefined) payload = JSON.stringify(opts.body);
  if (payload !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(sim.url + path, {
    method: opts.method ?? (payload === undefined ? 'GET' : 'POST'),
    headers,
    ...(payload !== undefined ? { body: payload } : {}),
  });
  const text = await res.text();
  const body = text === '' ? undefined : (JSON.parse(text) as unknown);
  return { status: res.status, headers: res.headers, body, json: body as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** A clock the test moves by hand. */
export function manualClock(start: Date) {
  let t = start.getTime();
  return {
    now: () => new Date(t),
    advance(ms: number) {
      t += ms;
    },
  };
}
