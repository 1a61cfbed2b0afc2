/**
 * The harness SDK over HTTP takes the same last, optional `{ timeoutMs, signal }` as every other
 * call (docs/client.md "Deadlines and cancellation"), and `HarnessClientOptions.timeoutMs` as the
 * client's default: a Baton that never answers is cut off (`client_timeout`, may have applied), an
 * abort before sending is `client_aborted` with `sent: false`. A chain read of several pages is
 * bounded as a whole. Real loopback servers that accept and then stall.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { HarnessClient } from '../../src/client/harness.js';
import { isBatonError } from '../../src/core/errors.js';

/** A loopback server; `answer` returns false to leave the request hanging (closed at teardown). */
async function server(
  t: TestContext,
  answer: (req: IncomingMessage, res: ServerResponse) => boolean,
): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  const s = createServer((req, res) => {
    seen.push(`${req.method ?? ''} ${req.url ?? ''}`);
    answer(req, res);
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    s.closeAllConnections();
    return new Promise<void>((resolve) => s.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, seen };
}

const stalls = (): boolean => false;

/** `client_timeout` at exactly `ms`: the deadline the call was given, not the 30 s default. */
const cutAt =
  (ms: number) =>
  (e: unknown): boolean =>
    isBatonError(e, 'client_timeout') && e.details?.['timeoutMs'] === ms;

test('harness calls take { timeoutMs } per call and the client default; a stalled answer is client_timeout at that deadline', async (t) => {
  // The server may not even see a request cut off this early on a loaded machine, so what is
  // asserted is the deadline the client applied, which the error names.
  const { url } = await server(t, stalls);
  const perCall = new HarnessClient({ baseUrl: url, credential: 'bt_x' });
  await assert.rejects(perCall.dispatch('wi_1', { timeoutMs: 50 }), cutAt(50));
  const byDefault = new HarnessClient({ baseUrl: url, credential: 'bt_x', timeoutMs: 60 });
  await assert.rejects(byDefault.enqueue({ action_class: 'consequential_write' }), cutAt(60));
  await assert.rejects(byDefault.complete('wi_1', { timeoutMs: 70 }), cutAt(70), "a call's own overrides it");
  await assert.rejects(perCall.get('wi_1', { timeoutMs: 0 }), (e: unknown) =>
    isBatonError(e, 'input_invalid'),
  );
});

test('an aborted signal: nothing sent (sent: false); a signal aborted in flight is client_aborted', async (t) => {
  const { url, seen } = await server(t, stalls);
  const client = new HarnessClient({ baseUrl: url, credential: 'bt_x' });
  const before = new AbortController();
  before.abort();
  await assert.rejects(
    client.complete('wi_1', { signal: before.signal }),
    (e: unknown) => isBatonError(e, 'client_aborted') && e.details?.['sent'] === false,
  );
  assert.deepEqual(seen, [], 'nothing reached the server');
  const during = new AbortController();
  const call = client.resume('wi_1', { signal: during.signal });
  while (seen.length === 0) await new Promise((resolve) => setImmediate(resolve));
  during.abort();
  await assert.rejects(
    call,
    (e: unknown) => isBatonError(e, 'client_aborted') && e.details?.['sent'] !== false,
  );
});

test("a chain read's deadline bounds its pages together: pages each well inside it, their sum beyond it, is client_timeout", async (t) => {
  const PAGES = 5;
  const { url } = await server(t, (req, res) => {
    const at = Number(/cursor=c(\d+)/.exec(req.url ?? '')?.[1] ?? '0');
    const next = at + 1 < PAGES ? `c${at + 1}` : null;
    const body = JSON.stringify({
      // A well-formed item (the client refuses a record of the wrong shape: harness-answers.ts).
      item: {
        id: 'wi_1',
        kind: 'queue_item',
        state: 'queued',
        actionClass: 'consequential_write',
        version: 1,
      },
      evidence: [{ seq: at + 1 }],
      evidenceNextCursor: next,
    });
    // Each page answers after 100 ms: inside a 250 ms deadline alone, five of them are not.
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    }, 100);
    return true;
  });
  const client = new HarnessClient({ baseUrl: url, credential: 'bt_x' });
  const whole = await client.get('wi_1', { timeoutMs: 10_000 });
  assert.deepEqual(
    whole.evidence.map((e) => e['seq']),
    [1, 2, 3, 4, 5],
    'the same pages, given time, are read whole',
  );
  await assert.rejects(client.get('wi_1', { timeoutMs: 250 }), (e: unknown) =>
    isBatonError(e, 'client_timeout'),
  );
});
