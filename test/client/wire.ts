/**
 * Loopback servers for the HTTP client's tests: a real Baton (`buildServer` over a real SQLite
 * file, the real sandbox provider behind it), and plain node:http servers that play something
 * else — a misbehaving gateway in front of Baton, or a server that is not Baton at all.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { systemClock } from '../../src/core/clock.js';
import { buildServer, createToken } from '../../src/server/index.js';
import { openStore, payments, startSandbox, type Provider, type Store } from './support.js';
import { listenLoopback } from '../support/loopback.js';

/** A real Baton server over `store` on 127.0.0.1:0 until the test ends, with an operator token. */
export async function batonOn(t: TestContext, store: Store, provider: Provider) {
  const app = buildServer({ engine: store.engine, service: store.service, keys: provider.keys });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  const { port } = app.server.address() as AddressInfo;
  const { token } = await createToken(
    store.engine,
    { role: 'operator' },
    { clock: systemClock, actor: 'test' },
  );
  return { url: `http://127.0.0.1:${port}`, token };
}

/** A real Baton on 127.0.0.1:0 with an operator token, over a new store and sandbox. */
export async function serveBaton(t: TestContext) {
  const provider = await startSandbox(t);
  const store = await openStore(t, provider);
  const { url, token } = await batonOn(t, store, provider);
  return { provider, store, op: payments(provider), baseUrl: url, token };
}

/** Listens on 127.0.0.1:0 until the test ends; the server's base URL. */
export const listen = listenLoopback;

/** A server that records what reaches it ("METHOD /path") and answers each request with `answer`. */
export async function recording(
  t: TestContext,
  answer: (res: ServerResponse, req: IncomingMessage) => void,
): Promise<{ received: string[]; url: string }> {
  const received: string[] = [];
  const server = createServer((req, res) => {
    received.push(`${req.method ?? ''} ${req.url ?? ''}`);
    req.resume().on('end', () => answer(res, req));
  });
  return { received, url: await listen(t, server) };
}

/**
 * A GATEWAY in front of Baton (not Baton): it forwards every request, lets Baton apply it and read
 * its answer, then relays it — unless `replace` gives another answer for that path, which goes to
 * the client instead (a 502 page over a command that committed, say).
 */
export async function misbehavingGateway(
  t: TestContext,
  upstream: string,
  replace: (path: string) => { status: number; type: string; body: string } | undefined,
): Promise<{ url: string; forwarded: string[] }> {
  const forwarded: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const path = req.url ?? '/';
        forwarded.push(`${req.method ?? ''} ${path}`);
        const headers = new Headers();
        for (const name of ['authorization', 'content-type', 'accept']) {
          const v = req.headers[name];
          if (typeof v === 'string') headers.set(name, v);
        }
        const hasBody = req.method !== 'GET' && req.method !== 'DELETE' && chunks.length > 0;
        const init = {
          method: req.method ?? 'GET',
          headers,
          ...(hasBody && { body: Buffer.concat(chunks) }),
        };
        const real = await fetch(new URL(path, upstream), init);
        const realBody = await real.text(); // Baton answered, and applied what it applied
        const swap = replace(path);
        if (swap !== undefined)
          return void res.writeHead(swap.status, { 'content-type': swap.type }).end(swap.body);
        const type = real.headers.get('content-type') ?? '';
        res.writeHead(real.status, type === '' ? {} : { 'content-type': type }).end(realBody);
      })();
    });
  });
  return { url: await listen(t, server), forwarded };
}
