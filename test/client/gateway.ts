/**
 * A reverse proxy on 127.0.0.1:0 that serves Baton under a path prefix, the way a gateway at
 * `https://host/baton/` does: it strips the prefix and forwards the request to the real server;
 * anything outside the prefix is a plain-text 404, so a client that drops the prefix fails.
 * `onAnswer` may act on the server's answer before it is relayed (to lose or delay it).
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';

export interface Gateway {
  /** The gateway's URL with the prefix and a trailing slash, e.g. `http://127.0.0.1:4711/baton/`. */
  readonly url: string;
  /** Paths the gateway forwarded, prefix stripped. */
  readonly forwarded: string[];
  /** Requests outside the prefix it refused. */
  readonly refused: string[];
}

export interface GatewayOptions {
  readonly prefix?: string;
  readonly onAnswer?: (path: string, answer: IncomingMessage) => Promise<void> | void;
}

async function listen(t: TestContext, server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    return closed;
  });
  return (server.address() as AddressInfo).port;
}

export async function startGateway(
  t: TestContext,
  upstream: string,
  options: GatewayOptions = {},
): Promise<Gateway> {
  const prefix = options.prefix ?? '/baton';
  const target = new URL(upstream);
  const forwarded: string[] = [];
  const refused: string[] = [];
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (!url.startsWith(`${prefix}/`)) {
      refused.push(url);
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no such route on this gateway');
      return;
    }
    const path = url.slice(prefix.length);
    forwarded.push(path);
    const headers = { ...req.headers, host: target.host };
    const out = request(
      { host: target.hostname, port: target.port, method: req.method, path, headers },
      (answer) => {
        void (async () => {
          await options.onAnswer?.(path, answer);
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        })();
      },
    );
    out.on('error', () => res.writeHead(502, { 'content-type': 'text/plain' }).end('upstream failed'));
    req.pipe(out);
  });
  const port = await listen(t, server);
  return { url: `http://127.0.0.1:${port}${prefix}/`, forwarded, refused };
}

/** A server that takes every request and never answers (or answers headers, then stalls). */
export async function startSilent(
  t: TestContext,
  mode: 'never' | 'stall-body' = 'never',
): Promise<{ url: string; received: string[] }> {
  const received: string[] = [];
  const server = createServer((req, res) => {
    received.push(`${req.method} ${req.url}`);
    if (mode === 'stall-body') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"total":');
    }
  });
  const port = await listen(t, server);
  return { url: `http://127.0.0.1:${port}`, received };
}
