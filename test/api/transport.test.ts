/**
 * The transport over a real socket (node:http on 127.0.0.1): one attempt's body, its whole-attempt
 * timeout and the stop signal, as undici's dispatch API carries them.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Transport, TransportFailure } from '../../src/api/transport.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server | undefined;
let transport: Transport | undefined;

async function serve(handler: Handler): Promise<Transport> {
  server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  transport = new Transport({ baseUrl: `http://127.0.0.1:${port}/base/`, connections: 4 });
  return transport;
}

afterEach(async () => {
  await transport?.close();
  server?.closeAllConnections();
  server?.close();
  transport = undefined;
  server = undefined;
});

const get = (path: string, extra: { timeoutMs?: number; signal?: AbortSignal } = {}) => ({
  method: 'GET' as const,
  path,
  headers: { accept: 'application/json' },
  timeoutMs: extra.timeoutMs ?? 5000,
  ...(extra.signal ? { signal: extra.signal } : {}),
});

describe('Transport over a real socket', () => {
  it('joins a body sent in chunks that split a multi-byte character, and keeps the base path', async () => {
    const text = JSON.stringify({ answer: '品牌排名第一：华为 🚀'.repeat(200) });
    const bytes = Buffer.from(text, 'utf8');
    let seenPath = '';
    const t = await serve((req, res) => {
      seenPath = req.url ?? '';
      res.writeHead(200, { 'content-type': 'application/json', 'x-extra': 'yes' });
      // Odd-sized writes: most boundaries fall inside a 3- or 4-byte UTF-8 sequence.
      for (let i = 0; i < bytes.length; i += 7) res.write(bytes.subarray(i, i + 7));
      res.end();
    });
    const r = await t.send(get('/api/v2/geo/task/info?task_id=1'));
    expect(r.status).toBe(200);
    expect(r.text).toBe(text);
    expect(r.headers['x-extra']).toBe('yes');
    expect(seenPath).toBe('/base/api/v2/geo/task/info?task_id=1');
  });

  it('an empty body is the empty string, with the status as sent', async () => {
    const t = await serve((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    const r = await t.send(get('/x'));
    expect(r).toMatchObject({ status: 204, text: '' });
  });

  it('a body that keeps trickling past the whole-attempt limit is a timeout', async () => {
    const t = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // A byte every 50 ms: undici's idle timers never fire, the attempt's own limit must.
      const timer = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(timer));
    });
    const started = Date.now();
    const err = await t.send(get('/slow', { timeoutMs: 400 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportFailure);
    expect((err as TransportFailure).kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('a reset connection is a network failure with the socket error code', async () => {
    const t = await serve((req) => req.socket.destroy());
    const err = await t.send(get('/reset')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportFailure);
    expect((err as TransportFailure).kind).toBe('network');
    expect((err as TransportFailure).code).toMatch(/^(UND_ERR_SOCKET|ECONNRESET)$/);
  });

  it('the stop signal ends every request in flight with its reason, through one listener', async () => {
    const arrived: ServerResponse[] = [];
    const t = await serve((_req, res) => {
      arrived.push(res); // never answered
    });
    const controller = new AbortController();
    const adds: string[] = [];
    const add = controller.signal.addEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((type: string, ...rest: [never, never]) => {
      adds.push(type);
      return add(type, ...rest);
    }) as typeof controller.signal.addEventListener;

    const pending = [1, 2, 3].map((i) =>
      t.send(get(`/hang/${i}`, { signal: controller.signal })).catch((e: unknown) => e),
    );
    while (arrived.length < 3) await new Promise((r) => setTimeout(r, 10));
    const reason = new Error('interrupted by SIGTERM');
    controller.abort(reason);
    const errors = await Promise.all(pending);
    expect(errors).toEqual([reason, reason, reason]);
    expect(adds).toEqual(['abort']);
    // The server sees the sockets closed: the requests were aborted, not left to run.
    await Promise.all(arrived.map((res) => (res.socket?.destroyed ? null : once(res, 'close'))));
  });

  it('an already stopped signal rejects at once without sending', async () => {
    let hits = 0;
    const t = await serve((_req, res) => {
      hits++;
      res.end('{}');
    });
    const controller = new AbortController();
    const reason = new Error('stopping');
    controller.abort(reason);
    await expect(t.send(get('/never', { signal: controller.signal }))).rejects.toBe(reason);
    expect(hits).toBe(0);
  });

  it('a response that arrives after the timeout does not settle the attempt twice', async () => {
    const t = await serve((_req, res) => {
      setTimeout(() => res.end('{"late":true}'), 300);
    });
    const err = await t.send(get('/late', { timeoutMs: 100 })).catch((e: unknown) => e);
    expect((err as TransportFailure).kind).toBe('timeout');
    await new Promise((r) => setTimeout(r, 400));
    // The pool is still usable afterwards.
    server!.removeAllListeners('request');
    server!.on('request', (_req: IncomingMessage, res: ServerResponse) => res.end('{"ok":1}'));
    expect((await t.send(get('/after'))).text).toBe('{"ok":1}');
  });
});
