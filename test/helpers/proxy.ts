/**
 * A small HTTP proxy in front of the simulator, as a hostile or broken server looks to the
 * client: each request is forwarded unless `answer` answers it itself, and each upstream answer
 * may be rewritten (as text) on its way back. Listens on 127.0.0.1, a free port.
 */
import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxyOptions {
  /** Answers the request itself (returns true), or leaves it to the upstream (false). */
  answer?: (req: IncomingMessage, res: ServerResponse, url: URL) => boolean;
  /** The upstream's body text as sent on, or undefined to leave it as it came. */
  rewrite?: (url: URL, body: string) => string | undefined;
}

export interface RunningProxy {
  url: string;
  /** Requests seen, by path. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

export async function startProxy(upstream: string, opts: ProxyOptions = {}): Promise<RunningProxy> {
  const target = new URL(upstream);
  const hits = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    if (opts.answer?.(req, res, url)) return;
    const up = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const body = Buffer.from(opts.rewrite?.(url, text) ?? text, 'utf8');
          const headers = { ...answer.headers, 'content-length': String(body.length) };
          delete headers['transfer-encoding'];
          res.writeHead(answer.statusCode ?? 502, headers);
          res.end(body);
        });
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close').catch(() => undefined);
    },
  };
}
