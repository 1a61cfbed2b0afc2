/**
 * The Status client's 429 and 503 holds (status-backoff.ts; A2.2 "unknown, back off", A7#13; RFC
 * 9110 §10.2.3) over real HTTP on loopback: the real reference issuer, and small loopback servers
 * for the answers it never sends (no `Retry-After`, an unreadable one, a huge one).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import {
  DEFAULT_STATUS_BACKOFF_SEC,
  MAX_STATUS_BACKOFF_SEC,
  MissionStatusClient,
  statusBackoffSeconds,
  type IssuerPin,
  type StatusFetchResult,
} from '../../src/missions/index.js';
import { startWorld, type World } from './issuer-support.js';

let world: World;
let mission: string;

before(async () => {
  world = await startWorld();
  mission = await world.createMission();
});
after(() => world.close());

function client(clock: ManualClock, pin: IssuerPin = world.pin): MissionStatusClient {
  return new MissionStatusClient({ pin, clientKey: world.key, keys: world.keys, clock });
}

function unknownOf(r: StatusFetchResult): StatusFetchResult & { kind: 'unknown' } {
  assert.equal(r.kind, 'unknown', JSON.stringify(r));
  return r;
}

/** A loopback server answering every request `status` with `headers`; `hits` counts what reached it. */
async function limiter(
  headers: Record<string, string>,
  status = 429,
): Promise<{ url: string; hits: () => number; server: Server }> {
  let hits = 0;
  const error = status === 429 ? 'rate_limited' : 'unavailable';
  const server = createServer((request, response) => {
    hits += 1;
    request.resume();
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(`{"error":"${error}","error_description":"not now","nonce":null}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/as/mission/status`, hits: () => hits, server };
}

test('the hold is bounded: 1 s at least, 300 s at most, 60 s when the 429 said nothing readable', () => {
  assert.deepEqual([null, 0, 2.5, 7, 300, 301, 999_999_999, Number.NaN].map(statusBackoffSeconds), [
    DEFAULT_STATUS_BACKOFF_SEC,
    1,
    3,
    7,
    300,
    MAX_STATUS_BACKOFF_SEC,
    300,
    DEFAULT_STATUS_BACKOFF_SEC,
  ]);
  assert.deepEqual([DEFAULT_STATUS_BACKOFF_SEC, MAX_STATUS_BACKOFF_SEC], [60, 300]);
});

test('A7#13: after the issuer’s 429 (Retry-After: 7) no request is sent for any Mission until 7 s passed', async () => {
  const clock = new ManualClock(Date.now());
  const c = client(clock);
  const other = await world.createMission();
  await world.admin('/admin/faults', { status: ['http_429'] });
  const limited = unknownOf(await c.check(mission));
  assert.deepEqual([limited.reason, limited.httpStatus, limited.retryAfterSec], ['rate_limited', 429, 7]);
  assert.equal(limited.backedOff, undefined, 'the 429 itself was sent');
  const sent = world.issuer.state.statusRequests;
  for (const [advance, id, left] of [
    [0, mission, 7],
    [3_000, other, 4],
    [3_999, mission, 1],
  ] as const) {
    clock.advance(advance);
    const held = unknownOf(await c.check(id));
    assert.deepEqual(
      [held.reason, held.httpStatus, held.retryAfterSec, held.backedOff],
      ['rate_limited', null, left, true],
    );
  }
  assert.equal(world.issuer.state.statusRequests, sent, 'nothing reached the issuer inside Retry-After');
  clock.advance(1);
  assert.equal((await c.check(mission)).kind, 'verified');
  assert.equal(world.issuer.state.statusRequests, sent + 1);
  // Another client (another issuer's, or another process's) is not held by this one's 429.
  await world.admin('/admin/faults', { status: ['http_429'] });
  assert.equal(unknownOf(await c.check(mission)).reason, 'rate_limited');
  assert.equal((await client(new ManualClock(Date.now())).check(mission)).kind, 'verified');
});

test('a 429 without Retry-After holds 60 s; one asking for more than 300 s holds 300 s', async (t) => {
  for (const [headers, expected] of [
    [{}, 60],
    [{ 'retry-after': 'soon' }, 60],
    [{ 'retry-after': '86400' }, 300],
  ] as const) {
    const l = await limiter(headers);
    t.after(() => l.server.close());
    const clock = new ManualClock(Date.now());
    const c = client(clock, { ...world.pin, endpoints: { ...world.pin.endpoints, status: l.url } });
    assert.equal(unknownOf(await c.check(mission)).retryAfterSec, expected);
    clock.advance(expected * 1000 - 1);
    assert.equal(unknownOf(await c.check(mission)).backedOff, true);
    assert.equal(l.hits(), 1, `held ${expected} s`);
    clock.advance(1);
    assert.equal(unknownOf(await c.check(mission)).backedOff, undefined);
    assert.equal(l.hits(), 2, `asked again after ${expected} s`);
  }
});

test('a 503 with Retry-After: 9 holds every Status request to that issuer for 9 s: unavailable, never active', async () => {
  const clock = new ManualClock(Date.now());
  const c = client(clock);
  const other = await world.createMission();
  await world.admin('/admin/faults', { status: ['http_503_retry_after'] });
  const down = unknownOf(await c.check(mission));
  assert.deepEqual([down.reason, down.httpStatus, down.retryAfterSec], ['unavailable', 503, 9]);
  assert.equal(down.backedOff, undefined, 'the 503 itself was sent');
  const sent = world.issuer.state.statusRequests;
  for (const [advance, id, left] of [
    [0, other, 9],
    [8_999, mission, 1],
  ] as const) {
    clock.advance(advance);
    const held = unknownOf(await c.check(id));
    assert.deepEqual(
      [held.reason, held.httpStatus, held.retryAfterSec, held.backedOff],
      ['unavailable', null, left, true],
    );
  }
  assert.equal(world.issuer.state.statusRequests, sent, 'nothing reached the issuer inside Retry-After');
  clock.advance(1);
  assert.equal((await c.check(other)).kind, 'verified');
  assert.equal(world.issuer.state.statusRequests, sent + 1);
});

test('a 503 without Retry-After (or with an unreadable one) holds nothing: the next check asks again', async () => {
  const clock = new ManualClock(Date.now());
  const c = client(clock);
  await world.admin('/admin/faults', { status: ['http_503'] });
  const down = unknownOf(await c.check(mission));
  assert.deepEqual([down.reason, down.httpStatus, down.retryAfterSec], ['unavailable', 503, null]);
  assert.equal((await c.check(mission)).kind, 'verified', 'asked again at once');
  const l = await limiter({ 'retry-after': 'soon' }, 503);
  try {
    const at = client(clock, { ...world.pin, endpoints: { ...world.pin.endpoints, status: l.url } });
    assert.equal(unknownOf(await at.check(mission)).retryAfterSec, null);
    assert.equal(unknownOf(await at.check(mission)).backedOff, undefined);
    assert.equal(l.hits(), 2, 'no hold from a 503 that did not say how long');
  } finally {
    l.server.close();
  }
});

test('a 503 asking for more than 300 s holds 300 s', async (t) => {
  const l = await limiter({ 'retry-after': '86400' }, 503);
  t.after(() => l.server.close());
  const clock = new ManualClock(Date.now());
  const c = client(clock, { ...world.pin, endpoints: { ...world.pin.endpoints, status: l.url } });
  assert.equal(unknownOf(await c.check(mission)).retryAfterSec, MAX_STATUS_BACKOFF_SEC);
  clock.advance(MAX_STATUS_BACKOFF_SEC * 1000 - 1);
  const held = unknownOf(await c.check(mission));
  assert.deepEqual([held.reason, held.backedOff, l.hits()], ['unavailable', true, 1]);
  clock.advance(1);
  assert.equal(unknownOf(await c.check(mission)).backedOff, undefined);
  assert.equal(l.hits(), 2);
});
