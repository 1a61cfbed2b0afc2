/** AOC-CASE-001 … 004: success, crash before entry, crash after entry, historical response. */
import { verifyEvidence } from '../../store/index.js';
import type { CaseDefinition } from './case.js';
import { AMOUNT, LOST } from './kit.js';

const case001: CaseDefinition = {
  id: 'AOC-CASE-001',
  title: 'Normal single-generation success',
  requirements: ['AOC-REQ-002', 'AOC-REQ-003', 'AOC-REQ-004', 'AOC-REQ-010', 'AOC-REQ-011', 'AOC-REQ-012'],
  inputs: {
    lineage: 'case-001',
    invoices: ['invoice-001'],
    faults: [],
    steps: ['takeover', 'create', 'enter', 'send', 'ack'],
  },
  async run(k) {
    const e = await k.executor('case-001');
    await k.authority('budget-001');
    const { ticket, ack } = await k.pay(e, 'original', 'invoice-001', 'budget-001');
    const o = await k.view(ticket.occurrence.id);
    const sandboxRef = k.env.sandbox.effects().find((x) => x.key === o.provider.nativeKey)?.reference;
    const a = await k.env.svc.getAuthority('budget-001');
    const { evidence } = await k.env.svc.getOccurrence(o.id);
    const seqs = evidence.map((x) => x.seq);
    k.check('exactly one provider entry', (await k.entries(o.id)) === 1);
    k.check('the provider applied exactly one effect for the native key', k.effects(o) === 1);
    k.check(
      'the signed acknowledgement is effective: success',
      ack.effective && ack.interpretation === 'success',
    );
    k.check(
      'resolved with success and effect occurred',
      o.phase === 'resolved' && o.outcome === 'success' && o.effect === 'occurred',
    );
    k.check(
      'the provider reference is bound and is the provider’s',
      sandboxRef !== undefined && o.provider.providerReference === sandboxRef,
    );
    k.check('authority consumed once', a.consumed === AMOUNT && a.reserved === 0);
    k.check(
      'evidence chain verifies and only grows',
      (await verifyEvidence(k.env.engine)).ok && seqs.every((s, i) => i === 0 || s > seqs[i - 1]!),
    );
  },
};

const case002: CaseDefinition = {
  id: 'AOC-CASE-002',
  title: 'Crash before serialized provider entry',
  requirements: ['AOC-REQ-005', 'AOC-REQ-006', 'AOC-REQ-008', 'AOC-REQ-010'],
  inputs: {
    lineage: 'case-002',
    invoices: ['invoice-002'],
    faults: [],
    steps: ['create', 'crash', 'takeover', 'release'],
  },
  async run(k) {
    const g1 = await k.executor('case-002');
    await k.authority('budget-002');
    const o = await k.create(g1, 'original', 'invoice-002', 'budget-002');
    const g2 = await k.executor('case-002');
    k.check(
      'the successor is handed the reserved occurrence',
      g2.takeover.reserved.some((x) => x.id === o.id),
    );
    await k.refused('retired predecessor enters', k.enter(g1, o.id), 'generation_retired');
    await k.refused(
      'successor enters the predecessor’s reservation',
      k.enter(g2, o.id),
      'generation_mismatch',
    );
    const released = await k.env.svc.release({
      credential: g2.credential,
      occurrenceId: o.id,
      requestDigest: o.provider.requestDigest,
    });
    k.check(
      'released on serialized non-entry, kept as a tombstone',
      released.phase === 'released' && released.enteredAt === null,
    );
    const again = await k.env.svc.create(
      k.createInput(
        g2,
        'invoice-002',
        { amount: AMOUNT, currency: 'eur', payee: 'acme-supplies', invoice: 'invoice-002' },
        'budget-002',
      ),
    );
    k.check(
      'the same creation binding returns the tombstone, no new reservation',
      !again.created && again.occurrence.id === o.id && again.occurrence.phase === 'released',
    );
    await k.refused('the tombstone is entered', k.enter(g2, o.id), 'not_reserved');
    const a = await k.env.svc.getAuthority('budget-002');
    k.check(
      'the reservation was returned atomically and nothing consumed',
      a.reserved === 0 && a.consumed === 0,
    );
    k.check('no provider entry and no provider effect', (await k.entries(o.id)) === 0 && k.effects(o) === 0);
  },
};

const case003: CaseDefinition = {
  id: 'AOC-CASE-003',
  title: 'Crash after entry before acknowledgement',
  requirements: ['AOC-REQ-005', 'AOC-REQ-006', 'AOC-REQ-008', 'AOC-REQ-010', 'AOC-REQ-012'],
  inputs: {
    lineage: 'case-003',
    invoices: ['invoice-003a', 'invoice-003b'],
    faults: { 'invoice-003a': LOST },
    steps: [
      'enter+send (answer lost)',
      'enter (crash before send)',
      'takeover',
      'attempt re-entry',
      'lookup',
    ],
  },
  async run(k) {
    const g1 = await k.executor('case-003');
    await k.authority('budget-003');
    const lost = await k.pay(g1, 'answer-lost', 'invoice-003a', 'budget-003', LOST);
    const b = await k.create(g1, 'never-sent', 'invoice-003b', 'budget-003');
    await k.enter(g1, b.id);
    const g2 = await k.executor('case-003');
    const a = lost.ticket.occurrence;
    const handed = new Set(g2.takeover.unresolved.map((x) => x.id));
    k.check('the successor is handed both unresolved occurrences', handed.has(a.id) && handed.has(b.id));
    k.check('the lost answer is missing knowledge', lost.ack.missingKnowledge === 'unavailable');
    await k.refused('successor re-enters the answered-lost occurrence', k.enter(g2, a.id), 'already_entered');
    await k.refused('successor re-enters the never-sent occurrence', k.enter(g2, b.id), 'already_entered');
    await k.refused('retired predecessor re-enters', k.enter(g1, a.id), 'generation_retired');
    await k.refused(
      'successor releases an entered occurrence',
      k.env.svc.release({
        credential: g2.credential,
        occurrenceId: b.id,
        requestDigest: b.provider.requestDigest,
      }),
      'already_entered',
    );
    const absent = await k.ask(b.id, 'by-key');
    k.check(
      'provider absence is missing knowledge, not non-entry',
      absent.missingKnowledge === 'not_found' && absent.occurrence.unresolved,
    );
    const auth = await k.env.svc.getAuthority('budget-003');
    k.check(
      'authority stays consumed, not replenished by replacement',
      auth.consumed === 2 * AMOUNT && auth.reserved === 0,
    );
    k.check(
      'one entry each, effects 1 and 0',
      (await k.entries(a.id)) === 1 &&
        (await k.entries(b.id)) === 1 &&
        k.effects(a) === 1 &&
        k.effects(b) === 0,
    );
    k.check('both remain unresolved', (await k.view(a.id)).unresolved && (await k.view(b.id)).unresolved);
  },
};

const case004: CaseDefinition = {
  id: 'AOC-CASE-004',
  title: 'Historical response closes the predecessor attempt',
  requirements: ['AOC-REQ-004', 'AOC-REQ-007', 'AOC-REQ-009', 'AOC-REQ-011', 'AOC-REQ-012'],
  inputs: {
    lineage: 'case-004',
    invoices: ['invoice-004'],
    faults: { 'invoice-004': LOST },
    steps: ['enter+send (answer and webhook lost)', 'takeover', 'webhook replayed', 'reconcile'],
  },
  async run(k) {
    const g1 = await k.executor('case-004');
    await k.authority('budget-004');
    const { ticket } = await k.pay(g1, 'original', 'invoice-004', 'budget-004', LOST);
    const g2 = await k.executor('case-004');
    const before = await k.env.svc.getAuthority('budget-004');
    await k.admin('POST', '/admin/webhooks/replay', { key: ticket.nativeKey });
    await k.env.sandbox.webhooksIdle();
    const hook = k.env.recorded.find((r) => r.occurrenceId === ticket.occurrence.id);
    const report = await k.reconciler('case-004').run();
    const o = await k.view(ticket.occurrence.id);
    k.check('the historical signed webhook is effective after replacement', hook?.result.effective === true);
    k.check('resolved: success, effect occurred', o.outcome === 'success' && !o.unresolved);
    k.check('nothing left for the reconciler to do', report.visited === 0);
    await k.refused(
      'the predecessor is not reactivated',
      k.env.svc.create(
        k.createInput(
          g1,
          'invoice-004-late',
          { amount: 1, currency: 'eur', payee: 'x', invoice: 'late' },
          'budget-004',
        ),
      ),
      'generation_retired',
    );
    await k.refused('no new attempt is admitted', k.enter(g2, o.id), 'already_entered');
    k.check(
      'the lineage generation is unchanged by the response',
      (await k.env.svc.getLineage('case-004')).generation === g2.generation,
    );
    const after = await k.env.svc.getAuthority('budget-004');
    k.check(
      'authority unchanged by reconciliation',
      after.consumed === before.consumed && after.reserved === before.reserved,
    );
    k.check('one entry, one effect', (await k.entries(o.id)) === 1 && k.effects(o) === 1);
  },
};

export const ENTRY_CASES: readonly CaseDefinition[] = [case001, case002, case003, case004];
