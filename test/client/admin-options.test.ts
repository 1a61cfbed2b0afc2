/**
 * AdminClient takes each call's own `{ timeoutMs, signal }` as every SDK call does (docs/client.md
 * "Deadlines and cancellation"): against a server that never answers, the call's deadline, not the
 * client's 30 s, cuts it off; an already-aborted signal sends nothing.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { AdminClient } from '../../src/client/index.js';
import { isBatonError } from '../../src/core/errors.js';
import { listen } from './wire.js';

test('every AdminClient call honours its own timeoutMs and signal', async (t) => {
  const received: string[] = [];
  // NOT Baton: a server that reads each request and never answers.
  const baseUrl = await listen(
    t,
    createServer((req) => received.push(`${req.method ?? ''} ${req.url ?? ''}`)),
  );
  const admin = new AdminClient({ baseUrl, token: 'btk.admin' });
  // Long enough for every request to reach the server on a loaded machine, far below the 30 s default.
  const o = { timeoutMs: 1_000 };
  const calls: [string, (options: { timeoutMs?: number; signal?: AbortSignal }) => Promise<unknown>][] = [
    ['getDomain', (x) => admin.getDomain(x)],
    ['configureDomain', (x) => admin.configureDomain({} as never, x)],
    ['listProfiles', (x) => admin.listProfiles({ limit: 5, ...x })],
    ['getProfile', (x) => admin.getProfile('p', '1', x)],
    ['registerProfile', (x) => admin.registerProfile({}, x)],
    ['listAuthorities', (x) => admin.listAuthorities(x)],
    ['getAuthority', (x) => admin.getAuthority('a', x)],
    ['createAuthority', (x) => admin.createAuthority({} as never, x)],
    ['getMissionIssuer', (x) => admin.getMissionIssuer('i', x)],
    ['pinMissionIssuer', (x) => admin.pinMissionIssuer({}, x)],
    ['replaceMissionIssuerBearer', (x) => admin.replaceMissionIssuerBearer('i', {}, x)],
    ['unpinMissionIssuer', (x) => admin.unpinMissionIssuer('i', x)],
    ['getMissionView', (x) => admin.getMissionView('o', 'm', undefined, x)],
    ['checkMission', (x) => admin.checkMission('o', 'm', x)],
    ['listContinuityProducers', (x) => admin.listContinuityProducers(x)],
    ['pinContinuityProducer', (x) => admin.pinContinuityProducer('p', [], x)],
    ['unpinContinuityProducer', (x) => admin.unpinContinuityProducer('p', x)],
    ['listTokens', (x) => admin.listTokens(x)],
    ['createToken', (x) => admin.createToken({ role: 'operator', name: 'n' }, x)],
  ];
  const started = Date.now();
  const codes = await Promise.all(
    calls.map(([name, call]) =>
      call(o).then(
        () => `${name}: answered`,
        (e: unknown) =>
          `${name}: ${isBatonError(e) ? `${e.code} ${String(e.details['timeoutMs'])}` : String(e)}`,
      ),
    ),
  );
  assert.deepEqual(
    codes,
    calls.map(([name]) => `${name}: client_timeout 1000`),
  );
  assert.ok(Date.now() - started < 10_000, 'cut off by the call deadline, not the 30 s default');
  assert.equal(received.length, calls.length);
  assert.ok(received.includes('GET /v1/profiles?limit=5'), 'limit still reaches the query');
  // An aborted signal: nothing is sent.
  const aborted = AbortSignal.abort();
  for (const [name, call] of calls) {
    await assert.rejects(call({ signal: aborted }), (e: unknown) => {
      assert.ok(isBatonError(e, 'client_aborted') && e.details['sent'] === false, name);
      return true;
    });
  }
  assert.equal(received.length, calls.length, 'no aborted call was sent');
});
