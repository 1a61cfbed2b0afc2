/**
 * The ceilings that bound a DURABLE HTTP webhook ingestion (issue 13 §8), measured beside it in
 * the same run by bench/reconciliation.bench.ts: the target (>= 0.3x of a bare HMAC-SHA256 over
 * the same payloads) compares an HTTP request plus a committed write with a hash, so the verdict
 * line shows what the fastest possible version of each part reaches on this machine:
 * - the same HTTP request to a fastify route that does nothing (the receiver's raw-body parser);
 * - one durable plain-SQL commit per delivery, on the store's own SQLite engine (WAL,
 *   synchronous = FULL, the same group commit), in a scratch file.
 */
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { openSqliteEngine } from '../src/store/sqlite.js';

export interface Sent {
  readonly body: string;
  readonly headers: Record<string, string>;
}

/** Closed loop: `concurrency` workers over `items`; items per second. */
export async function pool<T>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T) => Promise<void>,
): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
  return (items.length * 1000) / (performance.now() - start);
}

export interface Ceiling {
  rate(deliveries: readonly Sent[], concurrency: number): Promise<number>;
  close(): Promise<void>;
}

/** POST the same deliveries, with the same client, to a route that answers at once. */
export async function noopRoute(path: string): Promise<Ceiling> {
  const app = Fastify({ logger: false });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 1_048_576 }, (_r, body, done) =>
    done(null, body),
  );
  app.post(path, async (_request, reply) => reply.code(200).send({ received: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}${path}`;
  return {
    rate: (deliveries, concurrency) =>
      pool(deliveries, concurrency, async (d) => {
        const res = await fetch(url, { method: 'POST', headers: d.headers, body: d.body });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`bench: no-op route answered ${res.status}`);
      }),
    close: () => app.close(),
  };
}

/** One committed INSERT of the delivery's body per delivery (the least a durable receiver does). */
export async function durableCommit(dir: string): Promise<Ceiling> {
  const engine = openSqliteEngine(join(dir, 'ceiling.db'));
  await engine.transaction((tx) =>
    tx.run('CREATE TABLE ceiling_events (n INTEGER PRIMARY KEY, body TEXT NOT NULL)', []),
  );
  let n = 0;
  return {
    rate: (deliveries, concurrency) =>
      pool(deliveries, concurrency, async (d) => {
        const id = ++n;
        await engine.transaction((tx) =>
          tx.run('INSERT INTO ceiling_events (n, body) VALUES (?, ?)', [id, d.body]),
        );
      }),
    close: () => engine.close(),
  };
}
