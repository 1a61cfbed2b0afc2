/**
 * A loopback HTTP server answering every request with `page(n)` for the n-th one, as JSON: a Baton
 * that misbehaves on purpose, for the SDK's page readers (which must refuse pages that do not move
 * on rather than return a partial chain).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';

export async function fakeBaton(t: TestContext, page: (n: number) => JsonObject): Promise<string> {
  let n = 0;
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(page(n++)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
