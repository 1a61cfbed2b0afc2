/** AOC-CASE-005, 006: a retired executor racing the successor; the native key reset attack. */
import type { CaseDefinition } from './case.js';
import { AMOUNT, invoiceRequest, LOST } from './kit.js';

const case005: CaseDefinition = {
  id: 'AOC-CASE-005',
  title: 'Retired executor races the successor',
  requirements: ['AOC-REQ-001', 'AOC-REQ-006', 'AOC-REQ-010'],
  inputs: {
    lineage: 'case-005',
    invoices: ['invoice-005a', 'invoice-005b', 'invoice-005c'],
    faults: { 'invoice-005a': LOST },
    steps: [
      'enter+send a (answer lost)',
      'reserve b',
      'takeover',
      'race 5 attempts',
      'direct payment around Baton',
    ],
  },
  async run(k) {
    const g1 = await k.executor('case-005');
    await k.authority('budget-005');
    const { ticket } = await k.pay(g1, 'possibly-entered', 'invoice-005a', 'budget-005', LOST);
    const b = await k.create(g1, 'reserved-by-predecessor', 'invoice-005b', 'budget-005');
    const g2 = await k.executor('case-005');
    const a = ticket.occurrence;
    const count = (await k.env.svc.counts()).total;
    const race = await Promise.all([
      k.refusal(
        k.env.svc.create(k.createInput(g1, 'invoice-005c', invoiceRequest('invoice-005c'), 'budget-005')),
      ),
      k.refusal(k.enter(g1, b.id)),
      k.refusal(k.enter(g1, a.id)),
      k.refusal(k.enter(g2, a.id)),
      k.refusal(k.enter(g2, b.id)),
    ]);
    k.check(
      `stale generation refused everywhere (${race.slice(0, 3).join(', ')})`,
      race.slice(0, 3).every((c) => c === 'generation_retired'),
    );
    k.check(
      `successor cannot re-enter the possibly entered occurrence (${race[3]})`,
      race[3] === 'already_entered',
    );
    k.check(
      `successor cannot enter the predecessor’s reservation (${race[4]})`,
      race[4] === 'generation_mismatch',
    );
    k.check('the race created nothing', (await k.env.svc.counts()).total === count);
    k.check(
      'entries and effects: a once, b never',
      (await k.entries(a.id)) === 1 &&
        k.effects(a) === 1 &&
        (await k.entries(b.id)) === 0 &&
        k.effects(b) === 0,
    );
    const domain = await k.env.svc.getDomain();
    const direct = domain.bypassPaths.find((p) => p.kind === 'direct');
    const status = await k.direct('direct-005', 'invoice-005-direct');
    k.check('all six bypass kinds are disclosed', domain.bypassPaths.length === 6);
    k.check(
      'the direct path works around the domain and is disclosed as present, not claimed fenced',
      status === 201 && k.env.sandbox.effectCount('direct-005') === 1 && direct?.status === 'present',
    );
  },
};

const case006: CaseDefinition = {
  id: 'AOC-CASE-006',
  title: 'Native key reset attack',
  requirements: ['AOC-REQ-002', 'AOC-REQ-003', 'AOC-REQ-010'],
  inputs: {
    lineage: 'case-006',
    invoices: ['invoice-006', 'invoice-006-second'],
    linkedIds: { aadp_request_id: 'aadp-req-006', bcr_operation_id: 'bcr-op-006' },
    relabels: [
      'same binding',
      'changed request',
      'new key + same AADP id',
      'new key + same BCR id',
      'caller provider_key',
      'expected native key',
      'new generation',
    ],
    faults: [],
  },
  async run(k) {
    const g1 = await k.executor('case-006');
    await k.authority('budget-006');
    const linkedIds = [
      { type: 'aadp_request_id' as const, value: 'aadp-req-006' },
      { type: 'bcr_operation_id' as const, value: 'bcr-op-006' },
    ];
    const input = (
      e: typeof g1,
      key: string,
      request = invoiceRequest('invoice-006'),
      ids: unknown[] = linkedIds,
    ) => ({
      ...k.createInput(e, key, request, 'budget-006'),
      linkedIds: ids as typeof linkedIds,
    });
    const first = await k.env.svc.create(input(g1, 'invoice-006'));
    k.roles.set('original', first.occurrence.id);
    const id = first.occurrence.id;
    await k.send(await k.enter(g1, id));
    const same = await k.env.svc.create(input(g1, 'invoice-006'));
    k.check('the same creation binding resolves to the original', !same.created && same.occurrence.id === id);
    await k.refused(
      'same creation key, changed request',
      k.env.svc.create(input(g1, 'invoice-006', invoiceRequest('invoice-006', AMOUNT + 1))),
      'creation_binding_conflict',
    );
    await k.refused(
      'new creation key reusing the AADP request id',
      k.env.svc.create(input(g1, 'invoice-006-r1', undefined, [linkedIds[0]])),
      'linked_identifier_conflict',
    );
    await k.refused(
      'new creation key reusing the BCR operation id',
      k.env.svc.create(input(g1, 'invoice-006-r2', undefined, [linkedIds[1]])),
      'linked_identifier_conflict',
    );
    await k.refused(
      'a caller-chosen provider key',
      k.env.svc.create(input(g1, 'invoice-006-r3', undefined, [{ type: 'provider_key', value: 'k' }])),
      'input_invalid',
    );
    await k.refused(
      'entry under another native key',
      k.env.svc.enter({ credential: g1.credential, occurrenceId: id, expect: { nativeKey: 'attacker-key' } }),
      'provider_binding_conflict',
    );
    const g2 = await k.executor('case-006');
    const again = await k.env.svc.create(input(g2, 'invoice-006'));
    k.check('a new generation resolves to the original too', !again.created && again.occurrence.id === id);
    await k.refused('the new generation re-enters', k.enter(g2, id), 'already_entered');
    const second = await k.env.svc.create(input(g2, 'invoice-006-second', invoiceRequest('invoice-006'), []));
    k.roles.set('separately-intended', second.occurrence.id);
    const distinct =
      second.created &&
      second.occurrence.id !== id &&
      second.occurrence.provider.nativeKey !== first.occurrence.provider.nativeKey;
    k.check('a separately intended identical action gets its own occurrence and derived key', distinct);
    await k.env.svc.release({
      credential: g2.credential,
      occurrenceId: second.occurrence.id,
      requestDigest: second.occurrence.provider.requestDigest,
    });
    k.check(
      'one entry, one effect for the original; none for the released one',
      (await k.entries(id)) === 1 && k.effects(first.occurrence) === 1 && k.effects(second.occurrence) === 0,
    );
  },
};

export const FENCING_CASES: readonly CaseDefinition[] = [case005, case006];
