/**
 * The transport over a real socket (node:http on 127.0.0.1): one attempt's body, its whole-attempt
 * timeout and the stop signal, as undici's dispatch API carries them.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Transport, TransportFailure } from '../../src/api/transport.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server | undefined;
let transport: Transport | undefined;

async function serve(handler: Handler, opts: { maxResponseBytes?: number } = {}): Promise<Transport> {
  server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  transport = new Transport({ baseUrl: `http://127.0.0.1:${port}/base/`, connections: 4, ...opts });
  return transport;
}

/** The promise's outcome, or 'unsettled' if it has none after `ms`. */
async function settledWithin<T>(
  p: Promise<T>,
  ms: number,
): Promise<{ value: T } | { error: unknown } | 'unsettled'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'unsettled'>((r) => (timer = setTimeout(() => r('unsettled'), ms)));
  try {
    return await Promise.race([
      p.then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
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

  // A 600 MiB answer once made the process die (exit 13) or hang the scheduler.
  it('a body that goes on past the cap fails at once, aborted without being collected', async () => {
    let written = 0;
    let closed!: () => void;
    const socketClosed = new Promise<void>((r) => (closed = r));
    const t = await serve(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        // An answer that never ends: only a cap counted as the bytes come can end it.
        const chunk = Buffer.alloc(16 * 1024, 0x20);
        const pump = () => {
          while (!res.destroyed && res.write(chunk)) written += chunk.length;
          if (!res.destroyed) res.once('drain', pump);
        };
        res.on('close', closed);
        pump();
      },
      { maxResponseBytes: 64 * 1024 },
    );
    const outcome = await settledWithin(t.send(get('/huge', { timeoutMs: 20_000 })), 10_000);
    expect(outcome).not.toBe('unsettled');
    const err = (outcome as { error: unknown }).error;
    expect(err).toBeInstanceOf(TransportFailure);
    expect((err as TransportFailure).kind).toBe('too-large');
    expect((err as TransportFailure).limitBytes).toBe(64 * 1024);
    await socketClosed; // the request was aborted, not read to its end
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });

  it('a body announced over the cap (Content-Length) fails before it is read', async () => {
    const t = await serve(
      (_req, res) => {
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-length': String(10 * 1024 * 1024),
        });
        res.write('{"padding":"');
      },
      { maxResponseBytes: 4096 },
    );
    const err = await t.send(get('/announced')).catch((e: unknown) => e);
    expect((err as TransportFailure).kind).toBe('too-large');
    expect((err as TransportFailure).message).toMatch(/announced as 10485760 bytes/);
  });

  it('a body at the cap is read whole', async () => {
    const body = `{"a":"${'x'.repeat(4096 - 8)}"}`;
    expect(Buffer.byteLength(body)).toBe(4096);
    const t = await serve((_req, res) => res.end(body), { maxResponseBytes: 4096 });
    expect((await t.send(get('/exact'))).text).toBe(body);
  });

  it('a body that cannot be converted to text rejects the attempt instead of leaving it unsettled', async () => {
    // What a 600 MiB body does (ERR_STRING_TOO_LONG), without 600 MiB: the conversion throws.
    const t = await serve((_req, res) => res.end('{"marker":"convert-me"}'));
    const toString = Buffer.prototype.toString;
    const spy = vi.spyOn(Buffer.prototype, 'toString').mockImplementation(function (this: Buffer, ...args) {
      const text = toString.apply(this, args as Parameters<typeof toString>);
      if (text.includes('convert-me')) {
        throw Object.assign(new Error('Cannot create a string longer than 0x1fffffe8 characters'), {
          code: 'ERR_STRING_TOO_LONG',
        });
      }
      return text;
    });
    try {
      const outcome = await settledWithin(t.send(get('/convert')), 3000);
      expect(outcome).not.toBe('unsettled');
      const err = (outcome as { error: unknown }).error;
      expect(err).toBeInstanceOf(TransportFailure);
      expect((err as TransportFailure).kind).toBe('too-large');
      expect((err as TransportFailure).code).toBe('ERR_STRING_TOO_LONG');
    } finally {
      spy.mockRestore();
    }
  });

  // A key read from a CRLF .env file once wedged undici's Pool for good.
  it('a header value with CR or LF is refused without being sent, and the pool keeps serving', async () => {
    let hits = 0;
    const t = await serve((_req, res) => {
      hits++;
      res.end('{"ok":1}');
    });
    // More refusals than the pool has connections (4): undici's Pool would take each refusing
    // client for a busy one, and queue every later request for good.
    for (let i = 0; i < 6; i++) {
      const err = await t
        .send({ ...get('/crlf'), headers: { authorization: 'Bearer secret-key\r' } })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TransportFailure);
      expect((err as TransportFailure).kind).toBe('invalid-request');
      expect((err as TransportFailure).message).toBe(
        'the authorization header cannot be sent: its value contains a carriage return (CR) at the end',
      );
      expect((err as TransportFailure).message).not.toContain('secret-key');
    }
    expect(hits).toBe(0);
    const ok = await settledWithin(t.send(get('/after')), 3000);
    expect(ok).toEqual({ value: expect.objectContaining({ status: 200, text: '{"ok":1}' }) });
    expect(await settledWithin(t.close(), 3000)).toEqual({ value: undefined });
    transport = undefined;
  });
});
