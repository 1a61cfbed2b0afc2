/**
 * An unreachable Status endpoint (a closed loopback port) keeps the network failure as the cause,
 * on the unknown answer and on the BatonError made of it, and out of its message and details.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { systemClock } from '../../src/core/clock.js';
import { MissionStatusClient } from '../../src/missions/index.js';
import { unknownError } from '../../src/server/mission-consumer.js';
import { startWorld, type World } from './issuer-support.js';

let world: World;

before(async () => {
  world = await startWorld();
});
after(() => world.close());

test('an unreachable Status endpoint keeps the network failure as the cause, out of the message', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as AddressInfo;
  await new Promise((resolve) => closed.close(resolve));
  const pin = {
    ...world.pin,
    endpoints: { ...world.pin.endpoints, status: `http://127.0.0.1:${port}/as/mission/status` },
  };
  const c = new MissionStatusClient({ pin, clientKey: world.key, keys: world.keys, clock: systemClock });
  const r = await c.check('msn_unreachable000000000000000');
  assert.ok(r.kind === 'unknown');
  assert.equal(r.reason, 'unreachable');
  assert.ok(r.cause instanceof Error, 'the fetch failure is kept');
  assert.equal((r.cause.cause as { code?: string } | undefined)?.code, 'ECONNREFUSED');
  const error = unknownError(r);
  assert.equal(error.code, 'mission_status_unavailable');
  assert.equal(error.cause, r.cause, 'the BatonError carries it as its cause');
  assert.equal(error.message, 'Mission Status is unavailable (unreachable)');
  assert.equal(JSON.stringify(error.details).includes('ECONNREFUSED'), false);
});
