import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { exportPrivatePem, exportPublicPem } from '../../src/core/ed25519.js';
import { signLease } from '../../src/leases/index.js';
import {
  allocate,
  assertAccepted,
  assertRefused,
  draftLease,
  harness,
  mutate,
  readResource,
  release,
} from './helpers.js';
import type { RaceInput } from './race-gateway.js';
import { spawnNode } from '../support/child.js';

const ID = '99282';
const GATEWAYS = 8;
const ROUNDS = 5;
const PROCESS_ROUNDS = 2;

test('eight gateways racing leases over HTTP: exactly one commit per epoch, the rest 409', async (t) => {
  const h = await harness(GATEWAYS);
  t.after(() => h.close());
  let requests = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const before = await readResource(h, ID);
    // Every gateway read the same epoch E and fences at E + 1.
    const leases = await Promise.all(
      h.gateways.map(async (g) => signLease(await draftLease(h, ID, 'COMPENSATING_ACTION'), g)),
    );
    const replies = await Promise.all(leases.map((lease) => mutate(h, ID, lease)));
    requests += replies.length;
    const winners = replies.filter((r) => r.status === 200);
    assert.equal(winners.length, 1, `round ${round}: exactly one commit`);
    await assertAccepted(h, winners[0]!);
    for (const loser of replies.filter((r) => r.status !== 200))
      await assertRefused(h, loser, 'ERR_STALE_FENCE_EPOCH');
    const after = await readResource(h, ID);
    assert.equal(after.epoch, before.epoch + 1);
    const allocated = (s: unknown): number => (s as { allocated: number }).allocated;
    assert.equal(allocated(after.state), allocated(before.state) + 3, 'exactly one allocation applied');
  }
  t.diagnostic(`checked ${ROUNDS} rounds, ${requests} racing requests`);
});

interface Gateway {
  ready: Promise<void>;
  done: Promise<{ status: number; code: string | null }>;
  go(): void;
}

/** A racing gateway in its own process (race-gateway.ts): it says "ready", commits on "go". */
function spawnGateway(input: RaceInput): Gateway {
  // Under tsx (node --import tsx --test) the child needs the loader too; compiled tests run plain .js.
  const ts = import.meta.url.endsWith('.ts');
  const file = fileURLToPath(new URL(ts ? './race-gateway.ts' : './race-gateway.js', import.meta.url));
  const child = spawnNode('race-gateway', [...(ts ? ['--import', 'tsx'] : []), file], { stdin: true });
  child.proc.stdin!.write(`${JSON.stringify(input)}\n`);
  const ready = child.nextLine('its "ready" line').then((line) => assert.equal(line, 'ready'));
  const done = ready.then(
    async () => JSON.parse(await child.nextLine('its result')) as { status: number; code: string | null },
  );
  return { ready, done, go: () => child.proc.stdin!.end('go\n') };
}

test('eight gateway processes racing through their own SQLite connections: one commit per epoch', async (t) => {
  const h = await harness(GATEWAYS);
  t.after(() => h.close());
  for (let round = 0; round < PROCESS_ROUNDS; round++) {
    const before = await readResource(h, ID);
    const gateways = await Promise.all(
      h.gateways.map(async (g) => {
        const lease = signLease(await draftLease(h, ID, 'SNAPSHOT_RESTORE'), g);
        return spawnGateway({
          dbPath: h.dbPath,
          target: h.sor.targetUri(ID),
          lease: JSON.stringify(lease),
          operation: allocate(3),
          inversePayload: release(3),
          sorKeyPem: exportPrivatePem(h.sorKey.privateKey),
          trustedPems: h.gateways.map((k) => exportPublicPem(k.privateKey)),
          nowMs: h.clock.wallMs(),
        });
      }),
    );
    await Promise.all(gateways.map((g) => g.ready));
    for (const g of gateways) g.go();
    const results = await Promise.all(gateways.map((g) => g.done));
    assert.equal(results.filter((r) => r.status === 200).length, 1, `round ${round}: exactly one commit`);
    assert.deepEqual(
      results.filter((r) => r.status !== 200).map((r) => [r.status, r.code]),
      Array.from({ length: GATEWAYS - 1 }, () => [409, 'ERR_STALE_FENCE_EPOCH']),
    );
    const after = await readResource(h, ID);
    assert.equal(after.epoch, before.epoch + 1);
  }
  assert.equal(h.sor.ledger.verifyAuditChain(), undefined, 'audit chain intact across connections');
  t.diagnostic(`checked ${PROCESS_ROUNDS} rounds of ${GATEWAYS} processes`);
});
