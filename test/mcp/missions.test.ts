/**
 * The gateway's Mission gate backed by Baton (issue 15 §3/§5; Mission build spec A3.6, HAR-16,
 * MCO-01): the real reference issuer pushes its lifecycle SETs to Baton's real HTTP server (RFC
 * 8935 route, pinned issuer), the agent names its Mission in `_meta["baton/mission"]`, and the SDK
 * client calls `pay` through an in-process gateway whose upstream calls the sandbox provider (the
 * effect oracle). A revoked Mission ⇒ a tool error naming `mission_not_active`, the upstream never
 * called, zero provider effects; an unknown one ⇒ `mission_status_unavailable`; none ⇒
 * `mission_binding_missing`.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AdminClient, type BatonClient, type Executor, type Operation } from '../../src/client/index.js';
import { ManualClock, systemClock, type Clock } from '../../src/core/clock.js';
import type { JsonObject } from '../../src/core/json.js';
import { PUSH_DELIVERY } from '../../src/missions/index.js';
import { batonMissionGate, parsePolicy } from '../../src/mcp/index.js';
import { createToken } from '../../src/server/index.js';
import { eventually } from '../missions/consumer-world.js';
import { AUDIENCE, startWorld } from '../missions/issuer-support.js';
import { inProcessGateway, makeWorld, payArgs, policyFor } from './world.js';

const BEARER = 'mcp-test-stream-bearer-0123456789abcdef';

function errorCode(r: CallToolResult): string {
  assert.equal(r.isError, true, 'a tool error');
  return (r._meta?.['baton/error'] as { code: string }).code;
}

/**
 * Baton with the harness, the reference issuer pinned and pushing SETs, one approved Mission.
 * `clock` is both sides' time: what Baton judges by and what the issuer signs with.
 */
async function missionWorld(t: TestContext, clock: Clock = systemClock) {
  const w = await makeWorld(t, { harness: true, clock });
  const issuer = await startWorld({ clock });
  let issuerOpen = true;
  t.after(() => (issuerOpen ? issuer.close() : undefined));
  const closeIssuer = async (): Promise<void> => {
    issuerOpen = false;
    await issuer.close();
  };
  const admin = (await createToken(w.store.engine, { role: 'admin' }, { clock, actor: 'test' })).token;
  const keyFile = join(w.dir, 'client.jwk.json');
  writeFileSync(
    keyFile,
    JSON.stringify({ ...issuer.key.privateKey.export({ format: 'jwk' }), kid: issuer.key.kid }),
  );
  const pin = {
    ...issuer.pin,
    client: { ...issuer.pin.client, key_ref: `file:${keyFile}` },
    stream: { delivery: PUSH_DELIVERY },
  };
  const endpoint = `${w.batonUrl}/v1/missions/signals/${encodeURIComponent(pin.issuer)}`;
  assert.equal(
    (
      await issuer.admin('/admin/receivers', {
        audience: AUDIENCE,
        delivery: 'push',
        endpoint,
        bearer: BEARER,
      })
    ).status,
    201,
  );
  const pinned = await new AdminClient({ baseUrl: w.batonUrl, token: admin }).pinMissionIssuer({
    pin: pin as unknown as JsonObject,
    pushBearer: BEARER,
  });
  assert.equal(pinned.issuer, pin.issuer);
  const mission = await issuer.createMission();
  const operator = new AdminClient({ baseUrl: w.batonUrl, token: w.token });
  await eventually(
    async () => (await operator.getMissionView(pin.issuer, mission)).assessment.verdict === 'active',
    'the approval SET at Baton',
  );

  return { w, issuer, pin, mission, operator, closeIssuer };
}

test('HAR-16 issue 15 §5: a revoked Mission is refused before upstream with mission_not_active, zero effects; unknown and missing fail closed', async (t) => {
  const { w, issuer, pin, mission, operator } = await missionWorld(t);
  const policy = parsePolicy(
    JSON.stringify(
      policyFor(w.provider.profile, { mission: { required: true, actionClass: 'consequential_write' } }),
    ),
  );
  const { client } = await inProcessGateway(t, w, { policy, missions: batonMissionGate(operator) });
  const listed = (await client.listTools()).tools.find((x) => x.name === 'pay');
  assert.deepEqual((listed?._meta?.['baton/consequential'] as { mission: unknown }).mission, {
    enforcedBy: 'baton',
    meta: 'baton/mission',
    required: true,
  });
  const ref = { mission_id: mission, mission_origin: pin.issuer };
  const call = (invoice: string, meta: Record<string, unknown>) =>
    client.callTool({ name: 'pay', arguments: payArgs(invoice), _meta: meta }) as Promise<CallToolResult>;

  const ok = await call('inv-1', { 'baton/mission': ref });
  assert.notEqual(ok.isError, true, JSON.stringify(ok));
  assert.equal(w.provider.sandbox.effects().length, 1);
  assert.equal(w.control.calls['pay'], 1);

  assert.equal(errorCode(await call('inv-2', {})), 'mission_binding_missing');
  assert.equal(
    errorCode(await call('inv-2', { 'baton/mission': { mission_id: mission } })),
    'mission_binding_invalid',
  );
  const unknown = { mission_id: 'msn_never_issued_0123456789abcdef', mission_origin: pin.issuer };
  assert.equal(errorCode(await call('inv-3', { 'baton/mission': unknown })), 'mission_status_unavailable');
  assert.equal(w.control.calls['pay'], 1, 'no upstream call for a missing, invalid or unknown Mission');

  assert.equal((await issuer.admin(`/admin/missions/${mission}/revoke`, {})).status, 200);
  await eventually(
    async () => (await operator.getMissionView(pin.issuer, mission)).assessment.verdict === 'non_active',
    'the revocation SET at Baton',
  );
  const refused = await call('inv-4', { 'baton/mission': ref });
  assert.equal(errorCode(refused), 'mission_not_active');
  // AOC-REQ-002/-010 (docs/mcp.md "Repeat"): the paid call's repeat is its original outcome from
  // Baton's record whatever the Mission says now — the gate decides only whether NEW work starts.
  const again = await call('inv-1', { 'baton/mission': ref });
  assert.notEqual(again.isError, true, JSON.stringify(again));
  const first = ok._meta?.['baton/occurrence'] as { id: string };
  const repeated = again._meta?.['baton/occurrence'] as { id: string; repeat: boolean; effect: string };
  assert.deepEqual(
    [repeated.id, repeated.repeat, repeated.effect],
    [first.id, true, 'occurred'],
    'the repeat names the paid occurrence, its effect, repeat: true',
  );
  assert.equal(w.control.calls['pay'], 1, 'zero upstream calls after the revocation');
  assert.equal(w.provider.sandbox.effects().length, 1, 'zero provider effects after the revocation');
});

test("A3.2 HAR-02: an authority_hash in the Mission reference goes on the binding — Baton refuses a wrong one before entry (nothing sent); the Mission's own is paid", async (t) => {
  const { w, pin, mission, operator } = await missionWorld(t);
  const policy = parsePolicy(
    JSON.stringify(
      policyFor(w.provider.profile, { mission: { required: true, actionClass: 'consequential_write' } }),
    ),
  );
  const { client } = await inProcessGateway(t, w, { policy, missions: batonMissionGate(operator) });
  // A Status read (not the push SET) tells Baton the Mission's authority hash.
  await operator.checkMission(pin.issuer, mission);
  const seen = await operator.getMissionView(pin.issuer, mission);
  const hash = seen.view as { authority_hash?: unknown; authorityHash?: unknown } | null;
  const own = hash?.authority_hash ?? hash?.authorityHash;
  assert.equal(
    typeof own,
    'string',
    `the view knows the Mission's authority hash: ${JSON.stringify(seen.view)}`,
  );
  const call = (invoice: string, authority_hash: unknown) =>
    client.callTool({
      name: 'pay',
      arguments: payArgs(invoice),
      _meta: { 'baton/mission': { mission_id: mission, mission_origin: pin.issuer, authority_hash } },
    }) as Promise<CallToolResult>;
  const wrong = `sha-256:${'A'.repeat(43)}`;
  const refused = await call('inv-hash-wrong', wrong);
  // Refused at dispatch (A3.1), before anything is created or entered: the item is paused.
  assert.equal(errorCode(refused), 'mission_not_active', JSON.stringify(refused._meta));
  const details = (refused._meta?.['baton/error'] as { details?: { reason?: string } }).details;
  assert.equal(details?.reason, 'authority_hash_mismatch');
  assert.equal(w.control.calls['pay'] ?? 0, 0, 'nothing sent under a wrong authority hash');
  assert.equal(w.provider.sandbox.effects().length, 0);
  assert.equal(errorCode(await call('inv-hash-bad', 'not-a-digest')), 'mission_binding_invalid');
  const ok = await call('inv-hash-own', own);
  assert.notEqual(ok.isError, true, JSON.stringify(ok._meta));
  assert.equal(w.provider.sandbox.effects().length, 1);
});

test("HAR-25 docs/harness.md: the policy's actionClass sets the freshness bound — a Status view 5 s old is stale for external_commitment", async (t) => {
  // Time moves only when told: below, the Status answer is 5.5 s old however slow the machine, and
  // still inside its expires_at and Baton's 60 s, so consequential_write relies on it.
  const clock = new ManualClock(Date.now());
  const { w, pin, mission, operator, closeIssuer } = await missionWorld(t, clock);
  // A Status answer (not a SET) makes the view status-sourced: the class bound applies to it.
  assert.equal((await operator.checkMission(pin.issuer, mission)).active, true);
  clock.advance(5_500);
  const judged = async (cls?: 'external_commitment') =>
    (await operator.getMissionView(pin.issuer, mission, cls)).assessment.verdict;
  assert.deepEqual(
    [await judged('external_commitment'), await judged()],
    ['stale', 'active'],
    'the route judges per class',
  );
  await closeIssuer(); // a refresh now fails: only the view, judged for the class, decides
  const ref = { 'baton/mission': { mission_id: mission, mission_origin: pin.issuer } };
  const gate = batonMissionGate(operator);
  /** One pay call through a gateway whose policy carries `mission`. */
  const payUnder = async (mission: JsonObject, invoice: string): Promise<CallToolResult> => {
    const policy = parsePolicy(JSON.stringify(policyFor(w.provider.profile, { mission })));
    const g = await inProcessGateway(t, w, { policy, missions: gate, clock });
    return (await g.client.callTool({
      name: 'pay',
      arguments: payArgs(invoice),
      _meta: ref,
    })) as CallToolResult;
  };
  const stale = await payUnder({ required: true, actionClass: 'external_commitment' }, 'inv-hc');
  assert.equal(
    errorCode(stale),
    'mission_status_unavailable',
    'older than 5 s: stale for a high-consequence class',
  );
  assert.equal(w.control.calls['pay'] ?? 0, 0, 'nothing reached the upstream');
  const ok = await payUnder({ required: true }, 'inv-cw'); // consequential_write
  assert.notEqual(ok.isError, true, JSON.stringify(ok.content));
  assert.equal(w.provider.sandbox.effects().length, 1);
});

/** `target` with the members of `over` in place of its own (its other methods bound to it). */
function around<T extends object>(target: T, over: Partial<T>): T {
  return new Proxy(target, {
    get: (o, k) => {
      if (Object.hasOwn(over, k)) return over[k as keyof T];
      const v = Reflect.get(o, k, o) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(o) : v;
    },
  });
}

/**
 * The world's real Baton client, whose executors run `before` (once) just before the gateway's
 * create-and-enter reaches Baton: after the Mission gate passed and the work item was dispatched.
 */
function revokingBeforeEntry(
  baton: BatonClient,
  before: (ex: Executor, op: Operation) => Promise<void>,
): BatonClient {
  let pending = true;
  return around(baton, {
    takeover: async (...args: Parameters<BatonClient['takeover']>) => {
      const ex = await baton.takeover(...args);
      return around(ex, {
        createAndEnter: async (...a: Parameters<Executor['createAndEnter']>) => {
          if (pending) {
            pending = false;
            await before(ex, a[0]);
          }
          return ex.createAndEnter(...a);
        },
      });
    },
  });
}

test('A3.6: a Mission revoked after the gate passed is refused by Baton before provider entry — nothing sent; a reserved repeat is never entered', async (t) => {
  const { w, issuer, pin, mission, operator } = await missionWorld(t);
  const revoke = async (id: string): Promise<void> => {
    assert.equal((await issuer.admin(`/admin/missions/${id}/revoke`, {})).status, 200);
    await eventually(
      async () => (await operator.getMissionView(pin.issuer, id)).assessment.verdict === 'non_active',
      'the revocation SET at Baton',
    );
  };
  const policy = parsePolicy(
    JSON.stringify(
      policyFor(w.provider.profile, { mission: { required: true, actionClass: 'external_commitment' } }),
    ),
  );
  const call = (client: Awaited<ReturnType<typeof inProcessGateway>>['client'], m: string, inv: string) =>
    client.callTool({
      name: 'pay',
      arguments: payArgs(inv),
      _meta: { 'baton/mission': { mission_id: m, mission_origin: pin.issuer } },
    }) as Promise<CallToolResult>;

  // 1. Revoked after the gate and the dispatch, before create-and-enter: Baton's own transaction
  // refuses (the governed occurrence is linked to a work item the revocation suppressed).
  const one = await inProcessGateway(t, w, {
    policy,
    missions: batonMissionGate(operator),
    baton: revokingBeforeEntry(w.baton(), () => revoke(mission)),
  });
  const raced = await call(one.client, mission, 'inv-race');
  assert.equal(errorCode(raced), 'work_item_not_dispatchable', JSON.stringify(raced));
  assert.match(JSON.stringify(raced.content), /nothing was sent upstream/);
  assert.equal(w.control.calls['pay'] ?? 0, 0, 'the upstream never heard of the call');
  assert.equal(w.provider.sandbox.effects().length, 0, 'no payment');

  // 2. Reserved (governed) under an active Mission, revoked before its entry: refused; and its
  // repeat after the revocation is refused by the gate, the reservation never entered.
  const m2 = await issuer.createMission();
  await eventually(
    async () => (await operator.getMissionView(pin.issuer, m2)).assessment.verdict === 'active',
    'the second approval SET at Baton',
  );
  let reserved = '';
  const two = await inProcessGateway(t, w, {
    policy,
    missions: batonMissionGate(operator),
    baton: revokingBeforeEntry(w.baton(), async (ex, op) => {
      reserved = (await ex.create(op)).occurrence.id;
      await revoke(m2);
    }),
  });
  const stopped = await call(two.client, m2, 'inv-held');
  assert.equal(stopped.isError, true, JSON.stringify(stopped));
  assert.notEqual(reserved, '');
  const repeatedCall = await call(two.client, m2, 'inv-held');
  assert.equal(errorCode(repeatedCall), 'mission_not_active');
  const held = await w.baton().getOccurrence(reserved);
  assert.equal(held.occurrence.phase, 'reserved', 'the reservation was never entered');
  assert.ok(!held.evidence.some((e) => e.type === 'provider_entered'));
  assert.equal(w.control.calls['pay'] ?? 0, 0, 'nothing reached the upstream');
  assert.equal(w.provider.sandbox.effects().length, 0, 'no payment');
});

/**
 * The world's real Baton client whose executors lose every create answer while `lose()` says so
 * (the occurrence is created; the gateway hears nothing): a crash of the link mid-call.
 */
function losingCreates(baton: BatonClient, lose: () => boolean): BatonClient {
  const lost = async (ex: Executor, op: Operation): Promise<never> => {
    await ex.create(op);
    throw new Error('socket hang up');
  };
  return around(baton, {
    takeover: async (...args: Parameters<BatonClient['takeover']>) => {
      const ex = await baton.takeover(...args);
      return around(ex, {
        createAndEnter: async (...a: Parameters<Executor['createAndEnter']>) =>
          lose() ? lost(ex, a[0]) : ex.createAndEnter(...a),
        create: async (...a: Parameters<Executor['create']>) => (lose() ? lost(ex, a[0]) : ex.create(...a)),
      });
    },
  });
}

test('A3.6 AOC-REQ-010: a governed call reserved by a gone generation is reissued for its work item and paid once; every item ends; its repeat after revocation is the record', async (t) => {
  const { w, issuer, pin, mission, operator } = await missionWorld(t);
  const policy = parsePolicy(
    JSON.stringify(
      policyFor(w.provider.profile, { mission: { required: true, actionClass: 'consequential_write' } }),
    ),
  );
  const meta = { 'baton/mission': { mission_id: mission, mission_origin: pin.issuer } };
  const call = (client: Awaited<ReturnType<typeof inProcessGateway>>['client'], args: JsonObject) =>
    client.callTool({ name: 'pay', arguments: args, _meta: meta }) as Promise<CallToolResult>;
  const items = () =>
    w.store.engine.read((ex) =>
      ex.all<{ state: string; n: number | string }>(
        'SELECT state, COUNT(*) AS n FROM msn_items GROUP BY state',
      ),
    );

  // Session 1: the occurrence is reserved, every answer about it lost (generation 1 then goes).
  let lose = true;
  const one = await inProcessGateway(t, w, {
    policy,
    missions: batonMissionGate(operator),
    baton: losingCreates(w.baton(), () => lose),
  });
  assert.equal(errorCode(await call(one.client, payArgs('inv-gone'))), 'create_unconfirmed');
  lose = false;
  // Session 2 (a takeover): the repeat releases generation 1's reservation, reissues it for its
  // own work item (so entry checks the Mission) and pays — once, whatever is repeated after.
  const two = await inProcessGateway(t, w, { policy, missions: batonMissionGate(operator) });
  const paid = await call(two.client, payArgs('inv-gone'));
  assert.notEqual(paid.isError, true, JSON.stringify(paid));
  const o = paid._meta?.['baton/occurrence'] as { id: string; effect: string };
  assert.equal(o.effect, 'occurred');
  assert.notEqual((await call(two.client, payArgs('inv-gone'))).isError, true);
  assert.equal(w.control.calls['pay'], 1, 'sent once');
  assert.equal(w.provider.sandbox.effects().length, 1, 'paid once');
  // A call Baton refuses (over budget, nothing created) still ends its work item.
  const refused = await call(two.client, { ...payArgs('inv-huge'), amount: 90_000_000 });
  assert.equal(errorCode(refused), 'authority_insufficient');
  const states = await items();
  assert.deepEqual(
    states.map((s) => s.state),
    ['done'],
    `every governed call's item ended: ${JSON.stringify(states)}`,
  );

  // Revoked: the repeat of the paid call is answered from Baton's record (followed from the
  // released original to its reissue), never refused as new work.
  assert.equal((await issuer.admin(`/admin/missions/${mission}/revoke`, {})).status, 200);
  await eventually(
    async () => (await operator.getMissionView(pin.issuer, mission)).assessment.verdict === 'non_active',
    'the revocation SET at Baton',
  );
  const again = await call(two.client, payArgs('inv-gone'));
  assert.notEqual(again.isError, true, JSON.stringify(again));
  const repeated = again._meta?.['baton/occurrence'] as { id: string; repeat: boolean; effect: string };
  assert.deepEqual([repeated.id, repeated.repeat, repeated.effect], [o.id, true, 'occurred']);
  assert.equal(w.control.calls['pay'], 1, 'nothing sent again');
});

test('a mission member named like an Object.prototype member (constructor): a call that names no Mission is not refused as carrying an invalid one', async (t) => {
  const w = await makeWorld(t);
  const gate = batonMissionGate(new AdminClient({ baseUrl: w.batonUrl, token: w.token }));
  const input = {
    tool: 'pay',
    rule: { required: false, actionClass: 'consequential_write' as const, meta: 'constructor' },
    lineage: 'payments-agent',
    generation: 1,
  };
  assert.deepEqual(await gate.check({ ...input, meta: {} }), { ok: true, enforced: false });
  const required = await gate.check({ ...input, rule: { ...input.rule, required: true }, meta: {} });
  assert.equal(required.ok ? 'passed' : required.code, 'mission_binding_missing');
});
