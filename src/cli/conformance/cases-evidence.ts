/** AOC-CASE-009, 010: conflicting or unauthenticated evidence; terminal failure after entry. */
import type { CaseDefinition } from './case.js';
import { AMOUNT, invoiceRequest, LOST } from './kit.js';

const case009: CaseDefinition = {
  id: 'AOC-CASE-009',
  title: 'Conflicting or unauthenticated evidence',
  requirements: ['AOC-REQ-004', 'AOC-REQ-009', 'AOC-REQ-011'],
  inputs: {
    lineage: 'case-009',
    invoices: ['invoice-009a', 'invoice-009b'],
    faults: {
      'invoice-009a': ['conflicting_status', ...LOST],
      'invoice-009b': LOST,
      lookups: ['unsigned', 'bad_signature'],
    },
    steps: ['3 lookups of a', '2 faulted lookups of b', 'unsigned webhook for b'],
  },
  async run(k) {
    const g1 = await k.executor('case-009');
    await k.authority('budget-009');
    const s1 = (await k.pay(g1, 'conflicting', 'invoice-009a', 'budget-009', ['conflicting_status', ...LOST]))
      .ticket.occurrence;
    const answers = [
      await k.ask(s1.id, 'by-key'),
      await k.ask(s1.id, 'by-key'),
      await k.ask(s1.id, 'by-key'),
    ];
    const c = await k.view(s1.id);
    k.check('the contradiction is recorded as conflict', answers[1]?.missingKnowledge === 'conflict');
    k.check(
      'unresolved with the conflict flag; no favourable result selected',
      c.unresolved && c.conflict && c.outcome !== 'success',
    );
    const { evidence } = await k.env.svc.getOccurrence(s1.id);
    k.check(
      'every observation is preserved',
      evidence.filter((e) => e.type === 'observation_recorded').length === 4,
    );
    const s2 = (await k.pay(g1, 'unauthenticated', 'invoice-009b', 'budget-009', LOST)).ticket;
    const reasons: (string | null)[] = [];
    for (const fault of ['unsigned', 'bad_signature']) {
      k.env.sandbox.addFault({ key: s2.nativeKey ?? '' }, fault);
      reasons.push((await k.ask(s2.occurrence.id, 'by-key')).missingKnowledge);
    }
    const forged = await fetch(
      `${k.env.profile.document.statusSources.find((s) => s.kind === 'webhook')?.url ?? ''}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          id: 'evt_forged',
          object: 'event',
          type: 'payment.succeeded',
          data: {
            object: 'payment',
            status: 'succeeded',
            account: 'acct_sandbox',
            idempotency_key: s2.nativeKey,
          },
        }),
      },
    );
    await forged.arrayBuffer();
    const hook = k.env.recorded.find((r) => r.occurrenceId === s2.occurrence.id);
    reasons.push(hook?.result.missingKnowledge ?? null);
    k.check(
      `unsigned, wrongly signed and forged answers are unauthenticated (${reasons.join(', ')})`,
      reasons.every((r) => r === 'unauthenticated'),
    );
    const u = await k.view(s2.occurrence.id);
    k.check('unauthenticated evidence is kept and changes nothing', u.unresolved && u.outcome === 'unknown');
    k.check('one effect each', k.effects(c) === 1 && k.effects(u) === 1);
  },
};

const case010: CaseDefinition = {
  id: 'AOC-CASE-010',
  title: 'Terminal provider failure after entry',
  requirements: ['AOC-REQ-008', 'AOC-REQ-011', 'AOC-REQ-012'],
  inputs: {
    lineage: 'case-010',
    invoices: ['invoice-010a', 'invoice-010b', 'invoice-010b-replacement'],
    faults: { 'invoice-010a': ['fail_terminal'], 'invoice-010b': ['canceled_before_processing'] },
    steps: ['generic failure', 'no-effect cancellation', 'separately authorized replacement'],
  },
  async run(k) {
    const g1 = await k.executor('case-010');
    await k.authority('budget-010');
    const f1 = (await k.pay(g1, 'generic-failure', 'invoice-010a', 'budget-010', ['fail_terminal'])).ticket
      .occurrence;
    const f2t = (await k.pay(g1, 'no-effect', 'invoice-010b', 'budget-010', ['canceled_before_processing']))
      .ticket;
    const a = await k.view(f1.id);
    const b = await k.view(f2t.occurrence.id);
    k.check(
      'generic final failure leaves the protected effect unresolved',
      a.outcome === 'final_failure' && a.effect === 'unresolved' && a.unresolved,
    );
    k.check('the provider did apply that effect', k.effects(a) === 1);
    k.check(
      'authenticated no-effect evidence closes the bounded outcome',
      b.outcome === 'not_accepted' && b.effect === 'none_confirmed' && !b.unresolved,
    );
    k.check('and the provider applied nothing', k.effects(b) === 0);
    const consumed = (await k.env.svc.getAuthority('budget-010')).consumed;
    k.check('entered authority stays consumed in both branches', consumed === 2 * AMOUNT);
    const remedy = await k.env.svc.remedy({
      ...k.createInput(g1, 'invoice-010b-replacement', invoiceRequest('invoice-010b'), 'budget-010'),
      remedyOf: b.id,
      kind: 'replacement',
    });
    k.roles.set('replacement', remedy.occurrence.id);
    await k.send(await k.enter(g1, remedy.occurrence.id));
    const r = await k.view(remedy.occurrence.id);
    k.check(
      'the new attempt is its own occurrence, key and authorization',
      r.id !== b.id &&
        r.remedyOf === b.id &&
        r.provider.nativeKey !== b.provider.nativeKey &&
        r.outcome === 'success',
    );
    k.check(
      'the original no-effect occurrence is unchanged',
      JSON.stringify(await k.view(b.id)) === JSON.stringify(b),
    );
    k.check(
      'authority: the replacement consumed its own amount; nothing restored',
      (await k.env.svc.getAuthority('budget-010')).consumed === 3 * AMOUNT,
    );
    k.check('one effect for the replacement', k.effects(r) === 1);
  },
};

export const EVIDENCE_CASES: readonly CaseDefinition[] = [case009, case010];
