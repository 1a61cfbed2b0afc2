/**
 * What the HTTP client trusts in an answer. Fail closed (AOC-REQ-010): a 5xx is doubt whatever its
 * body names, only a JSON Content-Type is read as JSON, and an answer over the 64 MiB cap is
 * `baton_response_invalid` — none of them ever a refusal ("nothing was sent") or a success.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { HttpBatonClient } from '../../src/client/index.js';
import { isBatonError } from '../../src/core/errors.js';
import { CountingAdapter } from './support.js';
import { listen, misbehavingGateway, recording, serveBaton } from './wire.js';

const problem = 'application/problem+json';

test('a gateway 502 naming not_found over a committed create-and-enter is doubt, never refused', async (t) => {
  const { provider, op, baseUrl, token } = await serveBaton(t);
  const body = JSON.stringify({ type: 'about:blank', status: 502, code: 'not_found', detail: 'upstream' });
  const gateway = await misbehavingGateway(t, baseUrl, (path) =>
    path.endsWith('/create-and-enter') ? { status: 502, type: problem, body } : undefined,
  );
  const client = new HttpBatonClient({ baseUrl: gateway.url, token });
  const ex = await client.takeover('invoice-agent');
  await assert.rejects(ex.createAndEnter(op('k-502-direct')), (e: unknown) => {
    assert.ok(isBatonError(e, 'unavailable'), String(e));
    assert.deepEqual([e.details['status'], e.details['answeredCode']], [502, 'not_found']);
    return true;
  });
  const adapter = new CountingAdapter(provider);
  const r = await ex.perform(op('k-502'), adapter);
  assert.deepEqual(
    [r.status, r.reason, r.errorCode, r.occurrenceId, r.adapterCalls],
    ['unresolved', 'entry_unconfirmed', 'unavailable', null, 0],
  );
  // It had committed behind the gateway: both entries are open, neither was sent.
  const direct = new HttpBatonClient({ baseUrl, token });
  assert.equal((await direct.listUnresolved('invoice-agent')).length, 2);
  assert.equal(adapter.calls, 0);
});

test('a 4xx problem still refuses; a 5xx is doubt even when its body names a 4xx code, on any route', async (t) => {
  const codes = new Map<string, readonly [number, string]>([
    ['/v1/occurrences/a', [404, 'occurrence_not_found']],
    ['/v1/occurrences/b', [503, 'occurrence_not_found']],
    ['/v1/occurrences/c', [500, 'internal']],
  ]);
  const server = await recording(t, (res, req) => {
    const [status, code] = codes.get(req.url ?? '') ?? [500, 'internal'];
    res.writeHead(status, { 'content-type': problem }).end(JSON.stringify({ code, status }));
  });
  const client = new HttpBatonClient({ baseUrl: server.url, token: 't' });
  const seen = [];
  for (const id of ['a', 'b', 'c']) {
    const e: unknown = await client.getOccurrence(id).then(
      () => undefined,
      (error: unknown) => error,
    );
    assert.ok(isBatonError(e));
    seen.push([e.code, e.status, e.details['status']]);
  }
  assert.deepEqual(seen, [
    ['occurrence_not_found', 404, 404],
    ['unavailable', 503, 503],
    ['internal', 500, 500],
  ]);
});

test('a 2xx that is not JSON is baton_response_invalid, even when its bytes parse as the answer', async (t) => {
  const counts = JSON.stringify({ total: 7, byPhase: {}, byOutcome: {}, unresolved: 0, conflicts: 0 });
  const types = new Map([
    ['/a/v1/counts', 'text/html'],
    ['/b/v1/counts', ''],
    ['/c/v1/counts', 'application/json; charset=utf-8'],
    ['/d/v1/counts', 'application/vnd.baton+json'],
  ]);
  const server = await recording(t, (res, req) => {
    const type = types.get(req.url ?? '') ?? 'text/plain';
    res.writeHead(200, type === '' ? {} : { 'content-type': type }).end(counts);
  });
  const results: string[] = [];
  for (const prefix of ['a', 'b', 'c', 'd']) {
    for (const fetch of [undefined, globalThis.fetch]) {
      const client = new HttpBatonClient({
        baseUrl: `${server.url}/${prefix}/`,
        token: 't',
        ...(fetch && { fetch }),
      });
      results.push(
        await client.counts().then(
          (c) => `total ${c.total}`,
          (e: unknown) => (isBatonError(e) ? e.code : 'other'),
        ),
      );
    }
  }
  assert.deepEqual(results, [
    'baton_response_invalid',
    'baton_response_invalid',
    'baton_response_invalid',
    'baton_response_invalid',
    'total 7',
    'total 7',
    'total 7',
    'total 7',
  ]);
});

test('a forged create-and-enter answer as text/html never reaches the adapter', async (t) => {
  const forged = JSON.stringify({
    occurrence: { id: 'occ_forged', phase: 'entered' },
    created: true,
    ticket: { occurrence: { id: 'occ_forged' }, request: { amount: 1 }, nativeKey: 'k' },
  });
  const server = await recording(t, (res) => res.writeHead(200, { 'content-type': 'text/html' }).end(forged));
  const client = new HttpBatonClient({ baseUrl: server.url, token: 't' });
  let calls = 0;
  const r = await client.resume({ lineage: 'l', generation: 1, credential: 'bec.x' }).perform(
    {
      creationKey: 'k',
      provider: { profileId: 'p', profileVersion: '1' },
      request: {},
      authority: { id: 'payouts', amount: 1 },
    },
    () => Promise.resolve({ calls: ++calls }),
  );
  assert.deepEqual(
    [r.status, r.reason, r.errorCode, calls],
    ['unresolved', 'entry_unconfirmed', 'baton_response_invalid', 0],
  );
});

test('an error page that is not JSON maps by its status; its body is never read as a problem', async (t) => {
  const server = await recording(t, (res) =>
    res.writeHead(409, { 'content-type': 'text/plain' }).end('{"code":"occurrence_not_found"}'),
  );
  await assert.rejects(
    new HttpBatonClient({ baseUrl: server.url, token: 't' }).getOccurrence('x'),
    (e: unknown) => isBatonError(e, 'conflict'),
  );
});

test('an answer over the 64 MiB cap is baton_response_invalid, on the pool and with a fetch', async (t) => {
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  const server = createServer((_req, res) => {
    // Chunked (no Content-Length): the cap is found while reading, 64 MiB and one chunk in.
    res.writeHead(200, { 'content-type': 'application/json' });
    let sent = 0;
    const more = (): void => {
      while (sent <= 64) {
        sent += 1;
        if (!res.write(chunk)) return void res.once('drain', more);
      }
      res.end('{}');
    };
    more();
  });
  const baseUrl = await listen(t, server);
  for (const fetch of [undefined, globalThis.fetch]) {
    const client = new HttpBatonClient({ baseUrl, token: 't', ...(fetch && { fetch }) });
    await assert.rejects(client.counts(), (e: unknown) => {
      assert.ok(isBatonError(e, 'baton_response_invalid'), String(e));
      assert.match(e.message, /over 64 MiB/);
      return true;
    });
  }
});

test('with a caller fetch, an oversized answer is not read whole: the body stream is cancelled at the cap', async (t) => {
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  // 160 MiB on offer; a client that reads it whole pulls all of it before it checks the size.
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    let sent = 0;
    const more = (): void => {
      while (sent < 160) {
        sent += 1;
        if (!res.write(chunk)) return void res.once('drain', more);
      }
      res.end();
    };
    more();
  });
  const baseUrl = await listen(t, server);
  let pulled = 0;
  let cancelled = false;
  // The caller's own fetch: the real one, its answer's body counted as the client reads it.
  const counting: typeof fetch = async (input, init) => {
    const real = await fetch(input, init);
    const inner = (real.body as ReadableStream<Uint8Array>).getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await inner.read();
        if (done) return controller.close();
        pulled += value.byteLength;
        controller.enqueue(value);
      },
      cancel(reason) {
        cancelled = true;
        return inner.cancel(reason);
      },
    });
    return new Response(body, { status: real.status, headers: real.headers });
  };
  const client = new HttpBatonClient({ baseUrl, token: 't', fetch: counting });
  await assert.rejects(client.counts(), (e: unknown) => {
    assert.ok(isBatonError(e, 'baton_response_invalid'), String(e));
    assert.match(e.message, /over 64 MiB/);
    return true;
  });
  assert.ok(pulled <= 66 * 1024 * 1024, `read ${pulled} bytes, not stopped at the cap`);
  assert.equal(cancelled, true, 'the body stream was cancelled');
});
