/**
 * One U+0000 policy for every text Baton keeps (docs/api.md "Text"), on both engines: every text
 * field of every command refuses it at input validation (`input_invalid`, or `profile_invalid`
 * for a profile document), with no state change — before, SQLite stored a NUL that PostgreSQL's
 * TEXT cannot hold, so the same request succeeded on one engine and failed on the other.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../src/core/json.js';
import type { StoreEngine } from '../../src/store/engine.js';
import { enginesUnderTest, type EngineUnderTest } from '../store/engines.js';
import { createInput, domainConfig, observation, paymentsProfile, serviceOn, T0 } from './helpers.js';

const engines = await enginesUnderTest();
const NUL = 'a\u0000b';

async function state(engine: StoreEngine): Promise<string> {
  return engine.read(async (ex) => {
    const parts: string[] = [];
    for (const t of [
      'aoc_domain',
      'aoc_profiles',
      'aoc_lineages',
      'aoc_authorities',
      'aoc_occurrences',
      'aoc_linked_ids',
      'evidence_events',
    ]) {
      parts.push(`${t}:${JSON.stringify(await ex.all(`SELECT * FROM ${t} ORDER BY 1`))}`);
    }
    return parts.join('\n');
  });
}

async function prepared(t: TestContext, e: EngineUnderTest) {
  const { store, svc, g } = await serviceOn(t, e, 1_000_000);
  const made = await svc.create(createInput(g.credential, 'base'));
  const ticket = await svc.enter({ credential: g.credential, occurrenceId: made.occurrence.id });
  return { store, svc, credential: g.credential, ticket };
}

for (const e of engines) {
  test(`[${e.name}] U+0000 is refused in every text field at input validation, with no state change`, async (t) => {
    const { store, svc, credential, ticket } = await prepared(t, e);
    const domain = domainConfig();
    const paths = domain['bypassPaths'] as JsonObject[];
    const create = (over: JsonObject) => ({ ...createInput(credential, 'nul'), ...over });
    const req = createInput(credential, 'nul').request as JsonObject;
    const fields: [string, () => Promise<unknown>, string][] = [
      ['domain id', () => svc.configureDomain({ ...domain, id: NUL } as never), 'input_invalid'],
      [
        'bypass description',
        () =>
          svc.configureDomain({
            ...domain,
            bypassPaths: paths.map((p, i) => (i === 0 ? { ...p, description: NUL } : p)),
          } as never),
        'input_invalid',
      ],
      ['authority id', () => svc.createAuthority({ id: NUL, unit: 'EUR-cents', total: 1 }), 'input_invalid'],
      ['authority unit', () => svc.createAuthority({ id: 'x', unit: NUL, total: 1 }), 'input_invalid'],
      ['lineage', () => svc.takeover({ lineage: NUL }), 'input_invalid'],
      ['creation key', () => svc.create(create({ creationKey: NUL })), 'input_invalid'],
      [
        'linked identifier value',
        () => svc.create(create({ linkedIds: [{ type: 'bcr_operation_id', value: NUL }] })),
        'input_invalid',
      ],
      [
        'provider account',
        () =>
          svc.create(
            create({
              provider: { profileId: 'sandbox-payments', profileVersion: '2026-01-01', account: NUL },
            }),
          ),
        'input_invalid',
      ],
      [
        'provider environment',
        () =>
          svc.create(
            create({
              provider: { profileId: 'sandbox-payments', profileVersion: '2026-01-01', environment: NUL },
            }),
          ),
        'input_invalid',
      ],
      [
        'request member',
        () => svc.create(create({ request: { ...req, destination: NUL } })),
        'input_invalid',
      ],
      [
        'request nested member',
        () => svc.create(create({ request: { ...req, memo: { lines: ['ok', NUL] } } })),
        'input_invalid',
      ],
      [
        'profile provider name',
        () => svc.registerProfile(paymentsProfile({ id: 'nul-1', provider: { name: NUL, apiVersion: '1' } })),
        'profile_invalid',
      ],
      [
        'profile status name',
        () =>
          svc.registerProfile(
            paymentsProfile({
              id: 'nul-2',
              statuses: { [NUL]: { interpretation: 'success', establishesNoEffect: false } },
            }),
          ),
        'profile_invalid',
      ],
      [
        'profile unit map',
        () =>
          svc.registerProfile(
            paymentsProfile({
              id: 'nul-3',
              authority: { amount: 'amount', unit: { member: 'currency', values: { EUR: NUL } } },
            }),
          ),
        'profile_invalid',
      ],
      [
        'observation source',
        () => svc.observe(observation(ticket, 'succeeded', T0, { source: NUL })),
        'observation_invalid',
      ],
      ['observation native status', () => svc.observe(observation(ticket, NUL, T0)), 'observation_invalid'],
      [
        'observation carried account',
        () => svc.observe(observation(ticket, 'succeeded', T0, { carried: { account: NUL } })),
        'observation_invalid',
      ],
      [
        'observation pin',
        () =>
          svc.observe(observation(ticket, 'succeeded', T0, { authentication: { verified: true, pin: NUL } })),
        'observation_invalid',
      ],
      [
        'enter expectation',
        () => svc.enter({ credential, occurrenceId: ticket.occurrence.id, expect: { account: NUL } }),
        'input_invalid',
      ],
      ['occurrence id', () => svc.getOccurrence(NUL), 'input_invalid'],
      ['list filter', () => svc.listOccurrences({ creationKey: NUL }), 'input_invalid'],
    ];
    for (const [name, call, code] of fields) {
      const before = await state(store.engine);
      await assert.rejects(call(), (err: { code?: string; message?: string }) => {
        assert.equal(err.code, code, `${name}: ${String(err.message)}`);
        return true;
      });
      assert.equal(await state(store.engine), before, `${name}: no state change`);
    }
    t.diagnostic(`checked ${fields.length} text fields`);
  });
}
