/**
 * The gateway's fetch for the SDK's Streamable HTTP client (src/mcp/http-fetch.ts, issue 15 §7):
 * the transport's shared AbortSignal gathers no listener per request, yet aborting it still aborts
 * every request in flight. The fake base fetch keeps its listener on the signal it is given, as
 * undici's does until the request is garbage collected.
 */
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { test } from 'node:test';
import { perRequestSignalFetch } from '../../src/mcp/index.js';

function leakyFetch(): {
  fetch: (url: string | URL, init?: RequestInit) => Promise<Response>;
  seen: AbortSignal[];
} {
  const seen: AbortSignal[] = [];
  return {
    seen,
    fetch: (_url, init) => {
      const signal = init?.signal ?? undefined;
      if (signal !== undefined) {
        signal.addEventListener('abort', () => undefined);
        seen.push(signal);
      }
      return Promise.resolve(new Response('{}', { status: 200 }));
    },
  };
}

test('a thousand requests leave no listener on the shared signal', async () => {
  const base = leakyFetch();
  const shared = new AbortController();
  const f = perRequestSignalFetch(base.fetch);
  for (let i = 0; i < 1000; i += 1)
    await f('http://127.0.0.1/mcp', { method: 'POST', signal: shared.signal });
  assert.equal(getEventListeners(shared.signal, 'abort').length, 0);
  assert.equal(base.seen.length, 1000);
  assert.ok(
    base.seen.every((s) => s !== shared.signal),
    'each request has its own signal',
  );
});

test('aborting the shared signal aborts the requests in flight, with its reason', async () => {
  const base = leakyFetch();
  const shared = new AbortController();
  const f = perRequestSignalFetch(base.fetch);
  await f('http://127.0.0.1/mcp', { signal: shared.signal });
  await f('http://127.0.0.1/mcp', { signal: shared.signal });
  const reason = new Error('transport closed');
  shared.abort(reason);
  assert.deepEqual(
    base.seen.map((s) => s.aborted),
    [true, true],
  );
  assert.equal(base.seen[0]?.reason, reason);
});

test('a request without a signal is passed through as it is', async () => {
  const base = leakyFetch();
  const res = await perRequestSignalFetch(base.fetch)('http://127.0.0.1/mcp', { method: 'GET' });
  assert.equal(res.status, 200);
  assert.equal(base.seen.length, 0);
});
