/**
 * RFC 8936 §2.4: every SET of a poll answer is acknowledged or reported in the next poll's
 * `setErrs`. A `sets` member named `__proto__` is an ordinary jti: on a plain object its
 * assignment set the prototype and the SET vanished, neither acknowledged nor reported. A real
 * poll endpoint on loopback answers such a SET (not a valid SET); the poller must report it and
 * send it back in `setErrs`. Keys and expectation are the real reference issuer's.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { systemClock } from '../../src/core/clock.js';
import { InMemorySetReplay, parsePollResponse, SetPoller, withReplay } from '../../src/missions/index.js';
import { startWorld, type World } from './issuer-support.js';

let world: World;
let server: Server;
let endpoint: string;
const requests: Record<string, unknown>[] = [];
const answers: string[] = [
  '{"sets":{"__proto__":"eyJhbGciOiJFUzI1NiJ9.e30.c2ln","jti-2":"eyJhbGciOiJFUzI1NiJ9.e30.c2ln"}}',
  '{"sets":{}}',
];

before(async () => {
  world = await startWorld();
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      requests.push(JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>);
      response.writeHead(200, { 'content-type': 'application/json' }).end(answers.shift() ?? '{"sets":{}}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/poll`;
});
after(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await world.close();
});

test('parsePollResponse keeps a __proto__ jti as an ordinary key', () => {
  const parsed = parsePollResponse(Buffer.from('{"sets":{"__proto__":"a.b.c","j2":"d.e.f"}}'));
  assert.deepEqual(Object.keys(parsed.sets).sort(), ['__proto__', 'j2']);
  assert.equal(Object.hasOwn(parsed.sets, '__proto__'), true);
});

test('RFC 8936: a SET keyed __proto__ is reported in refused and in the next poll setErrs, never dropped', async () => {
  const poller = new SetPoller({
    endpoint,
    bearer: 'poll-bearer-0123456789abcdef',
    keys: world.keys,
    expect: { issuer: world.pin.issuer, audience: 'https://poller.example' },
    clock: systemClock,
    onSet: withReplay(new InMemorySetReplay(() => Date.now()), world.pin.issuer, () => Promise.resolve()),
  });
  const round = await poller.pollOnce();
  assert.deepEqual(Object.keys(round.refused).sort(), ['__proto__', 'jti-2']);
  assert.equal(Object.hasOwn(poller.pending.setErrs, '__proto__'), true);
  await poller.pollOnce();
  const sent = requests[1]?.['setErrs'] as Record<string, unknown> | undefined;
  assert.ok(sent !== undefined, 'the second poll reports errors');
  assert.deepEqual(Object.keys(sent).sort(), ['__proto__', 'jti-2']);
});
