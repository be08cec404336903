/**
 * The HTTP server (node:http, keep-alive). Per request: count it, route it by `METHOD path`,
 * draw its faults, wait its latency, then answer (or destroy the socket). Handlers are
 * synchronous over the in-memory world, so a request at latency 0 is answered in the same tick
 * its body ends.
 */
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AuthStore } from './auth.ts';
import type { Decision, FaultInjector } from './faults.ts';
import { withUnknownMembers } from './faults.ts';
import { OddValues, oddJsonText } from './odd-values.ts';
import type { Reply } from './http.ts';
import { ParamError, Params, fail, invalid, parseQuery } from './http.ts';
import type { Ctx } from './routes/context.ts';
import { BAD_JSON } from './routes/context.ts';
import type { Route } from './routes/index.ts';
import { Router } from './routes/index.ts';
import type { Stats } from './stats.ts';
import type { SimWorld } from './world.ts';

const MAX_BODY = 1 << 20;
/** Endpoints read per platform task, which `faults.forbiddenTaskIds` can refuse with 403. */
const FORBIDDEN_CAPABLE: ReadonlySet<string> = new Set(['taskResults', 'taskPrompts', 'taskInfo']);
const JSON_HEADERS = 'application/json; charset=utf-8';

export interface ServerDeps {
  world: SimWorld;
  auth: AuthStore;
  stats: Stats;
  faults: FaultInjector;
  unstableTotals: boolean;
}

export interface ListeningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** `odd`: the body may hold RawNumbers (odd-values.ts), written as their text. */
function send(res: ServerResponse, reply: Reply, odd = false): void {
  if (res.destroyed) return;
  const text = odd ? oddJsonText(reply.body) : JSON.stringify(reply.body);
  const headers: Record<string, string | number> = {
    'content-type': JSON_HEADERS,
    'content-length': Buffer.byteLength(text),
    ...reply.headers,
  };
  res.writeHead(reply.status, headers);
  res.end(text);
}

/** 200 with a body that is not valid JSON: cut in half, or an HTML error page from a proxy. */
function sendMalformed(res: ServerResponse, reply: Reply, truncate: boolean): void {
  if (res.destroyed) return;
  const full = JSON.stringify(reply.body);
  const text = truncate
    ? full.slice(0, Math.max(1, Math.floor(full.length / 2)))
    : '<html><head><title>502 Bad Gateway</title></head><body>upstream sent an invalid response</body></html>';
  res.writeHead(200, {
    'content-type': truncate ? JSON_HEADERS : 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

function parseBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return BAD_JSON;
  }
}

export async function listen(deps: ServerDeps, host: string, port: number): Promise<ListeningServer> {
  const { world, auth, stats, faults } = deps;
  const router = new Router();
  const odd = new OddValues(world.seed);
  const timers = new Set<NodeJS.Timeout>();
  /** Responses not yet closed, so close() can wait for their 'close' (it comes after the server's). */
  const live = new Set<ServerResponse>();
  let drained: (() => void) | null = null;
  function endRequest(this: ServerResponse) {
    live.delete(this);
    stats.end();
    if (live.size === 0 && drained) drained();
  }

  function answer(route: Route | undefined, query: string, token: string | null, body: unknown): Reply {
    if (!route) return fail(404, 'Not Found');
    if (route.auth && !auth.isValid(token))
      return { status: 401, body: { success: false, message: 'Unauthenticated.' } };
    if (FORBIDDEN_CAPABLE.has(route.name) && faults.forbidsTask(parseQuery(query).task_id))
      return fail(403, 'This action is unauthorized.');
    const ctx: Ctx = {
      world,
      auth,
      unstableTotals: deps.unstableTotals,
      resultsPerPageCap: deps.faults.resultsPerPageCap,
      query: new Params(query === '' ? {} : parseQuery(query)),
      body,
      token,
      pathId: route.pathId,
    };
    try {
      return route.handler(ctx);
    } catch (e) {
      if (e instanceof ParamError) return invalid(e, route.legacy);
      return fail(500, `simulator error: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  function respond(
    req: IncomingMessage,
    res: ServerResponse,
    d: Decision,
    route: Route | undefined,
    query: string,
    token: string | null,
    body: unknown,
  ): void {
    if (res.destroyed) return;
    switch (d.fate.kind) {
      case 'reset':
        stats.faults.resets++;
        req.socket.destroy();
        return;
      case 'error':
        stats.faults.serverErrors++;
        send(res, fail(d.fate.status, d.fate.status === 503 ? 'Service Unavailable' : 'Server Error'));
        return;
      case 'malformed':
        stats.faults.malformed++;
        sendMalformed(res, answer(route, query, token, body), d.fate.truncate);
        return;
      case 'ok': {
        const reply = answer(route, query, token, body);
        let out = faults.unknownMembers ? withUnknownMembers(reply.body) : reply.body;
        const rewrite = faults.oddValues && route !== undefined && reply.status === 200;
        if (rewrite) out = odd.rewrite(route.name, out, query === '' ? {} : parseQuery(query));
        send(res, { ...reply, body: out }, rewrite);
      }
    }
  }

  function proceed(
    req: IncomingMessage,
    res: ServerResponse,
    route: Route | undefined,
    query: string,
    token: string | null,
    body: unknown,
  ): void {
    // 429 comes first, as from a gateway in front of the application.
    if (faults.rateLimited(token ?? `ip:${req.socket.remoteAddress ?? ''}`, performance.now())) {
      stats.faults.rateLimited++;
      send(res, {
        status: 429,
        body: { message: 'Too Many Attempts.' },
        headers: { 'retry-after': String(faults.retryAfterSeconds) },
      });
      return;
    }
    const d = faults.decide();
    if (d.slow) stats.faults.slow++;
    if (d.delayMs <= 0) {
      respond(req, res, d, route, query, token, body);
      return;
    }
    const t = setTimeout(() => {
      timers.delete(t);
      respond(req, res, d, route, query, token, body);
    }, d.delayMs);
    timers.add(t);
  }

  const server = http.createServer({ noDelay: true }, (req, res) => {
    const url = req.url ?? '/';
    const qi = url.indexOf('?');
    const path = qi < 0 ? url : url.slice(0, qi);
    const query = qi < 0 ? '' : url.slice(qi + 1);
    const method = req.method ?? 'GET';
    const route = router.match(method, path);
    stats.begin(route ? route.id : 'unknown');
    // 'close' fires once the response is sent or the socket is gone: the request is no longer in flight.
    live.add(res);
    res.once('close', endRequest);
    const token = AuthStore.bearer(req.headers.authorization);
    if (method === 'GET' || method === 'HEAD') {
      proceed(req, res, route, query, token, undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => {
      const body = size > MAX_BODY ? BAD_JSON : parseBody(Buffer.concat(chunks).toString('utf8'));
      proceed(req, res, route, query, token, body);
    });
  });
  // Keep-alive longer than typical client pools (undici: 4 s; many proxies: 60 s).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;

  let closing: Promise<void> | null = null;
  return {
    url: `http://${shownHost}:${addr.port}`,
    port: addr.port,
    close() {
      closing ??= (async () => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // Idle keep-alive sockets and requests waiting on latency would hold close() open.
        server.closeAllConnections();
        await closed;
        if (live.size > 0) await new Promise<void>((resolve) => (drained = resolve));
      })();
      return closing;
    },
  };
}
