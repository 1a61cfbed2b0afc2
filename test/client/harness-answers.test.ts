/**
 * `HarnessClient` refuses a malformed or contradictory answer as `baton_response_invalid`, never a
 * success (fail closed): a real server's answers, rewritten by a custom fetch on the way back, must
 * not make a suppressed item read as permission to run (A3.1), an untainted session read as tainted
 * (HAR-29), a running item read as done, or `item: null` throw a TypeError later.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HarnessClient } from '../../src/client/harness.js';
import { isBatonError } from '../../src/core/errors.js';
import { binding, verifiedSignal } from '../missions/fixtures.js';
import { servedWorld } from '../missions/http-world.js';
import { enginesUnderTest } from '../store/engines.js';

type Body = Record<string, unknown>;
type Rewrite = (path: string, body: Body) => Body;

/** A fetch that answers the real server's status with `rewrite` applied to its JSON body. */
function rewriting(rewrite: { current: Rewrite }): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    if (!res.ok) return res;
    const path = (input instanceof Request ? new URL(input.url) : new URL(input)).pathname;
    const body = rewrite.current(path, (await res.json()) as Body);
    return new Response(JSON.stringify(body), {
      status: res.status,
      headers: { 'content-type': 'application/json' },
    });
  };
}

const [sqlite] = await enginesUnderTest();

test('HarnessClient: contradictory or malformed harness answers are baton_response_invalid', async (t) => {
  const api = await servedWorld(t, sqlite!);
  await api.harness.applyVerifiedSignal(verifiedSignal('active', 1, api.clock.wallMs()));
  const credential = await api.takeover('invoice-agent');
  const rewrite: { current: Rewrite } = { current: (_p, b) => b };
  const client = new HarnessClient({ baseUrl: api.url, credential, fetch: rewriting(rewrite) });
  const item = () => client.enqueue({ action_class: 'consequential_write', mission_binding: binding });
  const refused = (e: unknown) => isBatonError(e, 'baton_response_invalid');

  // The honest answers pass (the checks below are what refuse the rewritten ones).
  const session = await client.session(binding);
  assert.equal((await client.taint(session.id, 'tool_result')).tainted, true);
  const ok = await item();
  const d = await client.dispatch(ok.id);
  assert.equal(d.item.state, 'running');
  assert.equal((await client.complete(ok.id)).state, 'done');

  rewrite.current = (p, b) => (p.endsWith('/taint') ? { ...b, tainted: false } : b);
  await assert.rejects(client.taint(session.id, 'tool_result'), refused, 'taint answering tainted:false');

  const cases: readonly (readonly [string, Rewrite])[] = [
    [
      'item null, recheckAt whenever',
      (p, b) => (p.endsWith('/dispatch') ? { item: null, recheckAt: 'whenever' } : b),
    ],
    [
      'a suppressed item',
      (p, b) =>
        p.endsWith('/dispatch') ? { ...b, item: { ...(b['item'] as Body), state: 'suppressed' } } : b,
    ],
    ['recheckAt not epoch ms', (p, b) => (p.endsWith('/dispatch') ? { ...b, recheckAt: 'whenever' } : b)],
    [
      'another item',
      (p, b) => (p.endsWith('/dispatch') ? { ...b, item: { ...(b['item'] as Body), id: 'wi_other' } } : b),
    ],
  ];
  for (const [why, r] of cases) {
    rewrite.current = (_p, b) => b;
    const it = await item();
    rewrite.current = r;
    await assert.rejects(client.dispatch(it.id), refused, `dispatch answering ${why}`);
  }

  rewrite.current = (_p, b) => b;
  const running = await item();
  await client.dispatch(running.id);
  rewrite.current = (p, b) => (p.endsWith('/complete') ? { ...b, state: 'running' } : b);
  await assert.rejects(client.complete(running.id), refused, 'complete answering a running item');

  rewrite.current = (p, b) => (p.endsWith('/items') ? { ...b, state: 'whatever' } : b);
  await assert.rejects(item(), refused, 'enqueue answering an unknown state');
  rewrite.current = (p, b) => (p.endsWith('/sessions') ? { ...b, tainted: 'no' } : b);
  await assert.rejects(client.session(binding), refused, 'session answering a non-boolean tainted');
});
