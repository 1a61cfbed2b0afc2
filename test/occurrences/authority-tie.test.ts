/**
 * Authority is tied to the request (docs/occurrences.md "Authority tied to the request",
 * AOC-REQ-012) on both engines: a profile declares where the request carries its amount and unit,
 * and create refuses — `authority_request_mismatch` with the reason, no state change — a request
 * whose amount differs from the authority amount, is negative, fractional or not a number, or whose
 * unit is not the budget's. A profile that declares no tie cannot create (fail closed); one whose
 * requests carry no amount declares a fixed amount per occurrence. The shipped sandbox profiles
 * declare it.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../src/core/json.js';
import { loadProfile } from '../../src/providers/index.js';
import type { StoreEngine } from '../../src/store/engine.js';
import { enginesUnderTest, type EngineUnderTest } from '../store/engines.js';
import { createInput, paymentsProfile, serviceOn } from './helpers.js';

const engines = await enginesUnderTest();
const TABLES = [
  'aoc_occurrences',
  'aoc_linked_ids',
  'aoc_authorities',
  'aoc_open_stripes',
  'evidence_events',
  'evidence_heads',
];

/** Every row of the tables a create writes, on either engine: equal means nothing changed. */
async function state(engine: StoreEngine): Promise<string> {
  return engine.read(async (ex) => {
    const parts: string[] = [];
    for (const t of TABLES)
      parts.push(`${t}:${JSON.stringify(await ex.all(`SELECT * FROM ${t} ORDER BY 1, 2`))}`);
    return parts.join('\n');
  });
}

async function prepared(t: TestContext, e: EngineUnderTest) {
  const { store, svc, g } = await serviceOn(t, e, 10_000_000);
  await svc.createAuthority({ id: 'dollars', unit: 'USD-cents', total: 10_000 });
  return { store, svc, credential: g.credential };
}

function withRequest(credential: string, key: string, request: JsonObject, amount: number) {
  return {
    ...createInput(credential, key, amount),
    request: { currency: 'EUR', destination: 'acct_dest_42', ...request },
  };
}

for (const e of engines) {
  test(`[${e.name}] AOC-REQ-012 create refuses a request that does not spend exactly its authority`, async (t) => {
    const { store, svc, credential } = await prepared(t, e);
    const cases: [string, JsonObject, number, string][] = [
      ['a million for one unit', { amount: 1_000_000 }, 1, 'amount_differs'],
      ['one for a thousand', { amount: 1 }, 1_000, 'amount_differs'],
      ['negative', { amount: -5 }, 5, 'amount_negative'],
      ['fractional', { amount: 10.5 }, 10, 'amount_fractional'],
      ['a numeric string', { amount: '1000' }, 1_000, 'amount_not_a_number'],
      ['an object', { amount: { value: 1000 } }, 1_000, 'amount_not_a_number'],
      ['a unit the profile does not map', { amount: 100, currency: 'JPY' }, 100, 'unit_unknown'],
    ];
    for (const [name, request, amount, reason] of cases) {
      const before = await state(store.engine);
      await assert.rejects(
        svc.create(withRequest(credential, `k-${reason}-${amount}`, request, amount)),
        (err: { code?: string; details?: { reason?: string } }) => {
          assert.equal(err.code, 'authority_request_mismatch', name);
          assert.equal(err.details?.reason, reason, name);
          return true;
        },
      );
      assert.equal(await state(store.engine), before, `${name}: no state change`);
    }
    // The unit is the budget's: euros cannot be spent from a dollar budget.
    const dollars = {
      ...withRequest(credential, 'k-usd', { amount: 100 }, 100),
      authority: { id: 'dollars', amount: 100 },
    };
    await assert.rejects(svc.create(dollars), {
      code: 'authority_request_mismatch',
      details: { reason: 'unit_differs' },
    });
    // The exact amount in the budget's unit is created, and reserves exactly that.
    const ok = await svc.create(withRequest(credential, 'k-ok', { amount: 1_234 }, 1_234));
    assert.equal(ok.created, true);
    assert.equal((await svc.getAuthority('payouts')).reserved, 1_234);
    // A remedy is a create too: its request is tied the same way.
    await svc.enter({ credential, occurrenceId: ok.occurrence.id });
    const remedy = {
      ...withRequest(credential, 'k-refund', { amount: 1_234 }, 1),
      remedyOf: ok.occurrence.id,
      kind: 'refund' as const,
    };
    await assert.rejects(svc.remedy(remedy), { code: 'authority_request_mismatch' });
  });

  test(`[${e.name}] a profile that ties nothing cannot create (fail closed); perOccurrence fixes the amount`, async (t) => {
    const { store, svc, credential } = await prepared(t, e);
    const { authority: _tie, ...untied } = paymentsProfile({ id: 'untied', version: '1' });
    await svc.registerProfile(untied);
    const before = await state(store.engine);
    const onUntied = {
      ...createInput(credential, 'k-untied', 100),
      provider: { profileId: 'untied', profileVersion: '1' },
    };
    await assert.rejects(svc.create(onUntied), {
      code: 'authority_request_mismatch',
      details: { reason: 'profile_declares_no_tie' },
    });
    assert.equal(await state(store.engine), before);
    await svc.registerProfile(
      paymentsProfile({ id: 'messages', version: '1', authority: { perOccurrence: 1 } }),
    );
    const onFixed = (key: string, amount: number) => ({
      ...createInput(credential, key, amount),
      provider: { profileId: 'messages', profileVersion: '1' },
    });
    await assert.rejects(svc.create(onFixed('k-two', 2)), { code: 'authority_request_mismatch' });
    assert.equal((await svc.create(onFixed('k-one', 1))).created, true);
  });
}

test('profile validation: the tie must name request members and a unit (profile_invalid)', async (t) => {
  const e = engines[0];
  assert.ok(e !== undefined);
  const { svc } = await prepared(t, e);
  const bad: JsonObject[] = [
    { amount: 'total', unit: 'EUR-cents' },
    { amount: 'memo', unit: 'EUR-cents' },
    { amount: 'amount' },
    { amount: 'amount', unit: { member: 'nope', values: { EUR: 'EUR-cents' } } },
    { amount: 'amount', unit: { member: 'currency', values: {} } },
    { amount: 'amount', unit: 'EUR-cents', perOccurrence: 1 },
    { perOccurrence: 0 },
    { perOccurrence: 1.5 },
  ];
  for (const [i, authority] of bad.entries()) {
    await assert.rejects(
      svc.registerProfile(paymentsProfile({ id: `bad-${i}`, authority })),
      { code: 'profile_invalid' },
      JSON.stringify(authority),
    );
  }
});

test('the shipped sandbox profiles tie the authority to amount and currency', () => {
  for (const name of ['sandbox-payments', 'sandbox-payments-ed25519'] as const) {
    const p = loadProfile(name);
    assert.deepEqual(p.authority, {
      amount: 'amount',
      unit: { member: 'currency', values: { eur: 'EUR-cents', usd: 'USD-cents' } },
    });
    assert.ok(p.request.required.includes('amount'));
  }
});

for (const e of engines) {
  test(`[${e.name}] AOC-REQ-002 creation-key scope: per lineage; a domain-wide linked identifier makes one invoice one occurrence`, async (t) => {
    const { svc, credential: a } = await prepared(t, e);
    const b = (await svc.takeover({ lineage: 'second-agent' })).credential;
    const invoice = (cred: string, linked: boolean) => ({
      ...createInput(cred, 'invoice-2026-0042', 500),
      ...(linked ? { linkedIds: [{ type: 'bcr_operation_id' as const, value: 'invoice-2026-0042' }] } : {}),
    });
    // The creation key is scoped to the lineage: two roles may each mean their own occurrence.
    const first = await svc.create(invoice(a, false));
    const second = await svc.create(invoice(b, false));
    assert.notEqual(first.occurrence.id, second.occurrence.id);
    // What the docs teach for "at most one occurrence per material action" (AOC-REQ-002): a
    // domain-wide exclusive linked identifier. The second lineage is refused, not paid twice.
    const linkedA = await svc.create({ ...invoice(a, true), creationKey: 'invoice-2026-0042-linked' });
    assert.equal(linkedA.created, true);
    await assert.rejects(svc.create({ ...invoice(b, true), creationKey: 'invoice-2026-0042-linked' }), {
      code: 'linked_identifier_conflict',
    });
    const page = await svc.listOccurrences({ creationKey: 'invoice-2026-0042-linked' });
    assert.deepEqual(
      page.occurrences.map((o) => o.id),
      [linkedA.occurrence.id],
    );
    // The first lineage retrying gets its original occurrence back.
    const retry = await svc.create({ ...invoice(a, true), creationKey: 'invoice-2026-0042-linked' });
    assert.deepEqual([retry.created, retry.occurrence.id], [false, linkedA.occurrence.id]);
  });
}
