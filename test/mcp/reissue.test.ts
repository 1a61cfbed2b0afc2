/**
 * A call whose occurrence was created and never entered, repeated across generations (AOC-REQ-008,
 * -010; docs/mcp.md "Sessions and generations"): the reissue's creation key is bound to the released
 * occurrence, not to the generation, so every later generation finds the same successor — the
 * upstream (and the provider) see the payment once, however many sessions repeat it. A tombstone an
 * earlier build reissued under a key naming the generation (`<key>:g<N>`) is refused a second
 * successor by Baton (`reissue_invalid`, `details.successor`): the gateway reads that successor,
 * checks it is this call's, and follows it.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  HttpBatonClient,
  InProcessBatonClient,
  type BatonClient,
  type Executor,
} from '../../src/client/index.js';
import type { JsonObject } from '../../src/core/json.js';
import { MAX_REISSUE_HOPS, reissueKey } from '../../src/mcp/consequential.js';
import { compileArguments } from '../../src/mcp/arguments.js';
import { deriveCall, placeNativeKey } from '../../src/mcp/derive.js';
import { parsePolicy, startGateway, type Gateway } from '../../src/mcp/index.js';
import type { OccurrenceView } from '../../src/occurrences/index.js';
import { StatusSources } from '../../src/providers/index.js';
import { postgresForTests } from '../support/postgres.js';
import { postgresWorld } from './postgres-world.js';
import { PAY_TOOL, type UpstreamControl } from './upstream-payments.js';
import { connectSession, LINEAGE, makeWorld, payArgs, policyFor } from './world.js';

const pg = await postgresForTests();

type Meta = { id: string; effect: string; repeat: boolean };
const meta = (r: CallToolResult): Meta => r._meta?.['baton/occurrence'] as Meta;
const error = (r: CallToolResult): { code: string; reason?: string; successor?: string; cause?: string } =>
  r._meta?.['baton/error'] as { code: string };

/** What a scenario needs: Baton (over HTTP on SQLite, or in process on PostgreSQL) and the oracles. */
interface Rig {
  readonly baton: BatonClient;
  readonly policy: JsonObject;
  readonly control: UpstreamControl;
  readonly gateway: Gateway;
  readonly upstreamUrl: string;
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

/** `fetch`: how the gateway's client reaches Baton's HTTP API (default its keep-alive pool). */
async function sqliteRig(t: TestContext, fetch?: typeof globalThis.fetch): Promise<Rig> {
  const w = await makeWorld(t);
  const baton =
    fetch === undefined ? w.baton() : new HttpBatonClient({ baseUrl: w.batonUrl, token: w.token, fetch });
  return {
    baton,
    policy: w.policy,
    control: w.control,
    gateway: await gatewayFor(t, baton, w.policy, w.upstreamUrl),
    upstreamUrl: w.upstreamUrl,
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
    upstreamUrl: upstream.url,
    effects: () => provider.sandbox.effects().length,
    phase: async (id) => (await service.getOccurrenceView(id)).phase,
  };
}

function operationOf(rig: Rig, invoice: string): ReturnType<typeof deriveCall>['operation'] {
  const p = parsePolicy(JSON.stringify(rig.policy)).tools.get('pay');
  assert.ok(p !== undefined);
  return deriveCall(p, payArgs(invoice), undefined, compileArguments(PAY_TOOL, p)).operation;
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

/**
 * What a gateway before `reissueKey` did in a later generation: released `o` and reissued it under a
 * key naming its generation (`<key>:g<N>`), then died — before entry, or after it.
 */
async function legacyReissue(
  rig: Rig,
  invoice: string,
  o: OccurrenceView,
): Promise<{ ex: Executor; successor: OccurrenceView }> {
  const ex = await rig.baton.takeover(LINEAGE);
  const released = await ex.release(o.id, o.provider.requestDigest);
  const creationKey = `${operationOf(rig, invoice).creationKey}:g${ex.generation}`;
  return { ex, successor: (await ex.reissue({ occurrenceId: released.id, creationKey })).occurrence };
}

/** The old gateway's send of an entered occurrence: the upstream `pay` with the ticket's native key. */
async function sendAsOldGateway(t: TestContext, rig: Rig, invoice: string, nativeKey: string | null) {
  const p = parsePolicy(JSON.stringify(rig.policy)).tools.get('pay');
  assert.ok(p !== undefined);
  const placed = placeNativeKey(p.nativeKey, nativeKey, payArgs(invoice), {});
  const client = new Client({ name: 'gateway-before-reissue-key', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(rig.upstreamUrl)));
  t.after(() => client.close());
  const r = (await client.callTool({ name: 'pay', arguments: placed.arguments })) as CallToolResult;
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
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

/** (a) The old build's successor was entered and sent: the call is a repeat, never sent again. */
async function legacyEntered(t: TestContext, rig: Rig): Promise<void> {
  const inv = 'inv-legacy-entered';
  const a = await lostCreate(rig, inv);
  const { ex, successor: b } = await legacyReissue(rig, inv, a);
  const ticket = await ex.enter(b.id);
  await sendAsOldGateway(t, rig, inv, ticket.nativeKey); // then that generation died, unacknowledged
  assert.equal(rig.control.calls['pay'], 1);
  for (const g of ['N+2', 'N+3']) {
    const r = await pay(t, rig, inv);
    assert.notEqual(r.isError, true, `${g}: ${JSON.stringify(r.content)}`);
    assert.equal(meta(r).id, b.id, `${g}: answered from the successor the old build left`);
    assert.equal(meta(r).repeat, true);
    assert.equal(meta(r).effect, 'occurred', `${g}: settled by the status sources`);
  }
  assert.equal(rig.control.calls['pay'], 1, 'the upstream got no second call');
  assert.equal(rig.effects(), 1, 'the provider applied it once');
}

/** (b) The old build's successor is a dead generation's reservation: released, reissued, sent once. */
async function legacyReserved(t: TestContext, rig: Rig): Promise<void> {
  const inv = 'inv-legacy-reserved';
  const a = await lostCreate(rig, inv);
  const { successor: b } = await legacyReissue(rig, inv, a);
  assert.equal(b.phase, 'reserved');
  const r = await pay(t, rig, inv);
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  assert.ok(![a.id, b.id].includes(meta(r).id), 'C, reissued from B once B was released');
  assert.equal(await rig.phase(b.id), 'released');
  assert.equal((await rig.baton.getOccurrence(meta(r).id)).occurrence.reissueOf, b.id);
  const again = await pay(t, rig, inv);
  assert.notEqual(again.isError, true, JSON.stringify(again.content));
  assert.equal(meta(again).id, meta(r).id, 'a later generation follows A → B (old key) → C and repeats C');
  assert.equal(meta(again).repeat, true);
  assert.equal(rig.control.calls['pay'], 1, 'sent once');
  assert.equal(rig.effects(), 1);
}

test('AOC-REQ-010: created-never-entered, then repeated in three later generations: sent exactly once', async (t) => {
  await threeGenerations(t, await sqliteRig(t));
});

test('AOC-REQ-008: a chain A released → B (reserved by a dead generation) → C is followed, sent once', async (t) => {
  await chain(t, await sqliteRig(t));
});

test('upgrade: a tombstone an earlier build reissued under <key>:g<N>, successor entered and sent: a repeat, no second upstream call', async (t) => {
  await legacyEntered(t, await sqliteRig(t));
});

test('upgrade: a tombstone an earlier build reissued under <key>:g<N>, successor a dead reservation: released, reissued, sent once', async (t) => {
  await legacyReserved(t, await sqliteRig(t));
});

if (pg !== undefined) {
  test('PostgreSQL, Baton in process: three later generations, sent exactly once; a chain is followed', async (t) => {
    await threeGenerations(t, await postgresRig(t, await pg.schema()));
    await chain(t, await postgresRig(t, await pg.schema()));
  });

  test("PostgreSQL, Baton in process: an earlier build's <key>:g<N> successor is followed (entered: a repeat; reserved: reissued, sent once)", async (t) => {
    await legacyEntered(t, await postgresRig(t, await pg.schema()));
    await legacyReserved(t, await postgresRig(t, await pg.schema()));
  });
}

/**
 * The way to Baton's HTTP API, tampered with on the wire: a reissue refusal's `details.successor`
 * replaced by `forge.successor`, or an occurrence read answered by a dropped connection.
 */
function tamperingFetch(forge: { successor: string | null; loseRead: string | null }): typeof fetch {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input);
    if (forge.loseRead !== null && url.pathname.endsWith(`/v1/occurrences/${forge.loseRead}`)) {
      throw new TypeError('fetch failed'); // what undici throws when the connection drops
    }
    const answer = await fetch(input, init);
    if (forge.successor === null || answer.status !== 409 || !url.pathname.endsWith('/reissue'))
      return answer;
    const problem = (await answer.json()) as { details?: { successor?: string } };
    if (problem.details?.successor !== undefined) problem.details.successor = forge.successor;
    return new Response(JSON.stringify(problem), { status: answer.status, headers: answer.headers });
  };
}

test("upgrade: a details.successor that is not the tombstone's reissue for this call is refused, nothing sent (fail closed)", async (t) => {
  const forge = { successor: null as string | null, loseRead: null as string | null };
  const rig = await sqliteRig(t, tamperingFetch(forge));
  const other = await lostCreate(rig, 'inv-other'); // another call's reservation by a dead generation
  const inv = 'inv-forged';
  const a = await lostCreate(rig, inv);
  const { successor: b } = await legacyReissue(rig, inv, a);
  const forgeries: [string, string, string | undefined][] = [
    ['another call of this lineage', other.id, undefined],
    ['the tombstone itself', a.id, undefined],
    ['no occurrence at all', 'occ_0123456789abcdef0123456789abcdef', 'occurrence_not_found'],
  ];
  for (const [what, successor, cause] of forgeries) {
    forge.successor = successor;
    const r = await pay(t, rig, inv);
    assert.equal(r.isError, true, what);
    assert.deepEqual(
      { code: error(r).code, reason: error(r).reason, successor: error(r).successor, cause: error(r).cause },
      { code: 'reissue_invalid', reason: 'reissue_successor_mismatch', successor, cause },
      what,
    );
  }
  assert.equal(await rig.phase(other.id), 'reserved', 'the forged link was never released');
  assert.equal(await rig.phase(b.id), 'reserved');
  assert.equal(rig.control.calls['pay'] ?? 0, 0, 'nothing reached the upstream');
  assert.equal(rig.effects(), 0);

  // A lost answer to the successor read: doubt, nothing sent; the same call may be repeated.
  forge.successor = null;
  forge.loseRead = b.id;
  const lost = await pay(t, rig, inv);
  assert.equal(lost.isError, true);
  assert.equal(error(lost).code, 'unavailable');
  assert.equal(error(lost).successor, b.id);
  assert.match(JSON.stringify(lost.content), /reissue unconfirmed.*nothing was sent upstream/);
  assert.equal(await rig.phase(b.id), 'reserved');
  assert.equal(rig.control.calls['pay'] ?? 0, 0);

  // Untampered, the same call follows the real successor B and is sent once.
  forge.loseRead = null;
  const r = await pay(t, rig, inv);
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  assert.equal((await rig.baton.getOccurrence(meta(r).id)).occurrence.reissueOf, b.id);
  assert.equal(rig.control.calls['pay'], 1);
  assert.equal(rig.effects(), 1);
});

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

test('MAX_REISSUE_HOPS counts the links followed through <key>:g<N> successors too (fail closed)', async (t) => {
  const rig = await sqliteRig(t);
  let o = await lostCreate(rig, 'inv-long-legacy');
  for (let i = 0; i < MAX_REISSUE_HOPS; i++) o = (await legacyReissue(rig, 'inv-long-legacy', o)).successor;
  const r = await pay(t, rig, 'inv-long-legacy');
  assert.equal(r.isError, true);
  assert.deepEqual(
    { code: error(r).code, reason: error(r).reason },
    { code: 'reissue_invalid', reason: 'reissue_chain_too_long' },
  );
  assert.equal(await rig.phase(o.id), 'reserved', 'the last link was never released');
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
