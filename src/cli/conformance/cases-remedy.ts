/** AOC-CASE-011, 012: compensation does not rewrite; limits under replacement. */
import type { OccurrenceView } from '../../occurrences/index.js';
import type { CaseDefinition } from './case.js';
import { AMOUNT, invoiceRequest, LOST } from './kit.js';

const case011: CaseDefinition = {
  id: 'AOC-CASE-011',
  title: 'Compensation does not rewrite the occurrence',
  requirements: ['AOC-REQ-004', 'AOC-REQ-012'],
  inputs: {
    lineage: 'case-011',
    invoices: ['invoice-011', 'compensation-011'],
    profiles: { original: 'sandbox-payments', compensation: 'sandbox-payments-ed25519' },
    steps: ['pay', 'compensation remedy (own budget)', 'replayed remedy', 'enter+send compensation'],
  },
  async run(k) {
    const g1 = await k.executor('case-011');
    await k.authority('budget-011');
    await k.authority('refunds-011');
    const c = (await k.pay(g1, 'original', 'invoice-011', 'budget-011')).ticket.occurrence;
    const before = await k.env.svc.getOccurrence(c.id);
    const authBefore = await k.env.svc.getAuthority('budget-011');
    const request = invoiceRequest('invoice-011-compensation', AMOUNT, 'customer-refund');
    const input = {
      ...k.createInput(g1, 'compensation-011', request, 'refunds-011', k.env.ed25519Profile),
      remedyOf: c.id,
      kind: 'compensation' as const,
    };
    const d = await k.env.svc.remedy(input);
    k.roles.set('compensation', d.occurrence.id);
    const replay = await k.env.svc.remedy(input);
    k.check(
      'the remedy is replay-protected by its own creation binding',
      d.created && !replay.created && replay.occurrence.id === d.occurrence.id,
    );
    await k.send(await k.enter(g1, d.occurrence.id));
    const after = await k.env.svc.getOccurrence(c.id);
    const prior = before.evidence.map((e) => e.hash);
    const appended = after.evidence.slice(prior.length).map((e) => e.type);
    k.check(
      'the original record is byte-for-byte unchanged',
      JSON.stringify(after.occurrence) === JSON.stringify(before.occurrence),
    );
    k.check(
      'prior history entries are unchanged',
      prior.every((h, i) => after.evidence[i]?.hash === h),
    );
    k.check(
      `only the remedy link was appended (${appended.join(', ')})`,
      appended.length === 1 && appended[0] === 'remedy_linked',
    );
    const authAfter = await k.env.svc.getAuthority('budget-011');
    k.check(
      'the original consumed-authority record is unchanged',
      JSON.stringify(authAfter) === JSON.stringify(authBefore),
    );
    const r = await k.view(d.occurrence.id);
    k.check(
      'the remedy has its own identity, binding, authority and outcome',
      r.id !== c.id &&
        r.remedyOf === c.id &&
        r.authority.id === 'refunds-011' &&
        r.provider.profileId === k.env.ed25519Profile.id &&
        r.outcome === 'success',
    );
    k.check('one effect each', k.effects(c) === 1 && k.effects(r) === 1);
  },
};

function same(a: readonly OccurrenceView[], b: readonly OccurrenceView[]): boolean {
  return JSON.stringify(a.map((x) => x.id).sort()) === JSON.stringify(b.map((x) => x.id).sort());
}

const case012: CaseDefinition = {
  id: 'AOC-CASE-012',
  title: 'Pending and in-flight limit under replacement',
  requirements: ['AOC-REQ-005', 'AOC-REQ-006'],
  inputs: {
    lineages: ['case-012', 'case-012-pending'],
    limits: { maxPendingPerLineage: 2, maxInFlightPerLineage: 2 },
    invoices: [
      'invoice-012a',
      'invoice-012b',
      'invoice-012c',
      'invoice-012p1',
      'invoice-012p2',
      'invoice-012p3',
    ],
    faults: { 'invoice-012a': LOST, 'invoice-012b': LOST },
  },
  async run(k) {
    const g1 = await k.executor('case-012');
    await k.authority('budget-012');
    for (const [role, invoice] of [
      ['in-flight-1', 'invoice-012a'],
      ['in-flight-2', 'invoice-012b'],
    ] as const) {
      await k.pay(g1, role, invoice, 'budget-012', LOST);
    }
    const open = await k.env.svc.listUnresolved('case-012');
    const effects = k.env.sandbox.effects().length;
    const extra = () => k.createInput(g1, 'invoice-012c', invoiceRequest('invoice-012c'), 'budget-012');
    await k.refused('work beyond the in-flight limit', k.env.svc.create(extra()), 'limit_in_flight_exceeded');
    const g2 = await k.executor('case-012');
    k.check('the successor is handed the unresolved records', same(g2.takeover.unresolved, open));
    await k.refused(
      'the successor beyond the in-flight limit',
      k.env.svc.create({ ...extra(), credential: g2.credential }),
      'limit_in_flight_exceeded',
    );
    const later = await k.env.svc.listUnresolved('case-012');
    k.check(
      'existing unresolved records remain queryable and unchanged',
      JSON.stringify(later) === JSON.stringify(open),
    );
    const p1 = await k.executor('case-012-pending');
    for (const [role, invoice] of [
      ['pending-1', 'invoice-012p1'],
      ['pending-2', 'invoice-012p2'],
    ] as const) {
      await k.create(p1, role, invoice, 'budget-012');
    }
    await k.refused(
      'work beyond the pending limit',
      k.env.svc.create(k.createInput(p1, 'invoice-012p3', invoiceRequest('invoice-012p3'), 'budget-012')),
      'limit_pending_exceeded',
    );
    const p2 = await k.executor('case-012-pending');
    await k.refused(
      'the successor beyond the pending limit',
      k.env.svc.create(k.createInput(p2, 'invoice-012p3', invoiceRequest('invoice-012p3'), 'budget-012')),
      'limit_pending_exceeded',
    );
    k.check(
      'the held reservations are still there, handed to the successor',
      p2.takeover.reserved.length === 2,
    );
    k.check('no provider entry for refused work', k.env.sandbox.effects().length === effects);
  },
};

export const REMEDY_CASES: readonly CaseDefinition[] = [case011, case012];
