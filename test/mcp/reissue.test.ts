/**
 * A call whose occurrence was created and never entered, repeated across generations (AOC-REQ-008,
 * -010; docs/mcp.md "Sessions and generations"): the reissue's creation key is bound to the released
 * occurrence, not to the generation, so every later generation finds the same successor — the
 * upstream (and the provider) see the payment once, however many sessions repeat it.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { InProcessBatonClient, type BatonClient, type Executor } from '../../src/client/index.js';
import type { JsonObject } from '../../src/core/json.js';
import { MAX_REISSUE_HOPS, reissueKey } from '../../src/mcp/consequential.js';
import { deriveCall } from '../../src/mcp/derive.js';
import { parsePolicy, startGateway, type Gateway } from '../../src/mcp/index.js';
import type { OccurrenceView } from '../../src/occurrences/index.js';
import { StatusSources } from '../../src/providers/index.js';
import { postgresForTests } from '../support/postgres.js';
import { postgresWorld } from './postgres-world.js';
import type { UpstreamControl } from './upstream-payments.js';
import { connectSession, LINEAGE, makeWorld, payArgs, policyFor } from './world.js';

const pg = await postgresForTests();

type Meta = { id: string; effect: string; repeat: boolean };
const meta = (r: CallToolResult): Meta => r._meta?.['baton/occurrence'] as Meta;
const error = (r: CallToolResult): { code: string; reason?: string } =>
  r._meta?.['baton/error'] as { code: string };

/** What a scenario needs: Baton (over HTTP on SQLite, or in process on PostgreSQL) and the oracles. */
interface Rig {
  readonly baton: BatonClient;
  readonly policy: JsonObject;
  readonly control: UpstreamControl;
  readonly gateway: Gateway;
  effects(): number;
  phase(id: string): Promise<string>;
}

async function gatewayFor(t: TestContext, baton: BatonClient, policy: JsonObject, url: string) {
  const gateway = await startGateway({
    baton,
    policy: parsePolicy(JSON.stringify(policy)),
    upstreams: [{ name: 'payments', url }],
    upstreamTimeoutMs: 5_000,
  });
  t.after(() => gateway.close());
  return gateway;
}

async function sqliteRig(t: TestContext): Promise<Rig> {
  const w = await makeWorld(t);
  const baton = w.baton();
  return {
    baton,
    policy: w.policy,
    control: w.control,
    gateway: await gatewayFor(t, baton, w.policy, w.upstreamUrl),
    effects: () => w.provider.sandbox.effects().length,
    phase: async (id) => (await w.store.service.getOccurrenceView(id)).phase,
  };
}

/** Baton's service in this process on a real PostgreSQL schema, as `baton mcp --postgres` runs it. */
async function postgresRig(t: TestContext, url: string): Promise<Rig> {
  const { provider, service, control, upstream } = await postgresWorld(t, url, 'baton-mcp-reissue-');
  const baton = new InProcessBatonClient({
    service,
    statusSources: new StatusSources({ keys: provider.keys }),
  });
  const policy = policyFor(provider.profile);
  return {
    baton,
    policy,
    control,
    gateway: await gatewayFor(t, baton, policy, upstream.url),
    effects: () => provider.sandbox.effects().length,
    phase: async (id) => (await service.getOccurrenceView(id)).phase,
  };
}

function operationOf(rig: Rig, invoice: string): ReturnType<typeof deriveCall>['operation'] {
  const p = parsePolicy(JSON.stringify(rig.policy)).tools.get('pay');
  assert.ok(p !== undefined);
  return deriveCall(p, payArgs(invoice), undefined).operation;
}

/** Generation N: creates the occurrence the call maps to, then dies before entry (answer lost). */
async function lostCreate(rig: Rig, invoice: string): Promise<OccurrenceView> {
  const predecessor = await rig.baton.takeover(LINEAGE);
  return (await predecessor.create(operationOf(rig, invoice))).occurrence;
}

/** A generation that released `o` and reissued it as the gateway does, then died before entry. */
async function lostReissue(rig: Rig, invoice: string, o: OccurrenceView): Promise<OccurrenceView> {
  const ex: Executor = await rig.baton.takeover(LINEAGE);
  const released = await ex.release(o.id, o.provider.requestDigest);
  const creationKey = reissueKey(operationOf(rig, invoice).creationKey, released.id);
  return (await ex.reissue({ occurrenceId: released.id, creationKey })).occurrence;
}

async function pay(t: TestContext, rig: Rig, invoice: string): Promise<CallToolResult> {
  const session = await connectSession(t, rig.gateway); // a new Mcp-Session-Id: a takeover, a new generation
  return (await session.callTool({ name: 'pay', arguments: payArgs(invoice) })) as CallToolResult;
}

async function threeGenerations(t: TestContext, rig: Rig): Promise<void> {
  const a = await lostCreate(rig, 'inv-3gen');
  const first = await pay(t, rig, 'inv-3gen'); // N+1: A released, reissued as B, B sent
  assert.notEqual(first.isError, true, JSON.stringify(first.content));
  assert.notEqual(meta(first).id, a.id);
  for (const g of ['N+2', 'N+3']) {
    const again = await pay(t, rig, 'inv-3gen');
    assert.notEqual(again.isError, true, `${g}: ${JSON.stringify(again.content)}`);
    assert.equal(meta(again).id, meta(first).id, `${g} replays B through its creation binding`);
    assert.equal(meta(again).repeat, true);
  }
  assert.equal(rig.control.calls['pay'], 1, 'the upstream saw the payment once');
  assert.equal(rig.effects(), 1, 'the provider applied it once');
}

async function chain(t: TestContext, rig: Rig): Promise<void> {
  const a = await lostCreate(rig, 'inv-chain');
  const b = await lostReissue(rig, 'inv-chain', a);
  assert.equal(b.phase, 'reserved');
  const r = await pay(t, rig, 'inv-chain');
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  assert.ok(![a.id, b.id].includes(meta(r).id), 'C, reissued from the released B');
  assert.equal(await rig.phase(b.id), 'released');
  const again = await pay(t, rig, 'inv-chain');
  assert.equal(meta(again).id, meta(r).id, 'a later generation follows A → B → C and repeats C');
  assert.equal(rig.control.calls['pay'], 1);
  assert.equal(rig.effects(), 1);
}

test('AOC-REQ-010: created-never-entered, then repeated in three later generations: sent exactly once', async (t) => {
  await threeGenerations(t, await sqliteRig(t));
});

test('AOC-REQ-008: a chain A released → B (reserved by a dead generation) → C is followed, sent once', async (t) => {
  await chain(t, await sqliteRig(t));
});

if (pg !== undefined) {
  test('PostgreSQL, Baton in process: three later generations, sent exactly once; a chain is followed', async (t) => {
    await threeGenerations(t, await postgresRig(t, await pg.schema()));
    await chain(t, await postgresRig(t, await pg.schema()));
  });
}

test('a reissue chain longer than MAX_REISSUE_HOPS is refused before anything is sent (fail closed)', async (t) => {
  const rig = await sqliteRig(t);
  let o = await lostCreate(rig, 'inv-long');
  for (let i = 0; i < MAX_REISSUE_HOPS; i++) o = await lostReissue(rig, 'inv-long', o);
  const r = await pay(t, rig, 'inv-long');
  assert.equal(r.isError, true);
  assert.deepEqual(
    { code: error(r).code, reason: error(r).reason },
    { code: 'reissue_invalid', reason: 'reissue_chain_too_long' },
  );
  assert.equal(rig.control.calls['pay'] ?? 0, 0, 'nothing reached the upstream');
  assert.equal(rig.effects(), 0);
});

test('the reissue key stays within the occurrences NAME rule', () => {
  const key = 'mcp:sha-256:' + 'A'.repeat(43);
  assert.equal(
    reissueKey(key, 'occ_0123456789abcdef0123456789abcdef'),
    `${key}:reissue:occ_0123456789abcdef0123456789abcdef`,
  );
  assert.match(reissueKey(key, 'x'.repeat(100)), /^mcp:reissue:sha-256:[A-Za-z0-9_-]{43}$/);
});
