/** AOC-CASE-007, 008: provider binding substitution; missing retention or incomplete lookup. */
import { digestJcs } from '../../core/digest.js';
import { StatusSources } from '../../providers/index.js';
import type { CaseDefinition } from './case.js';
import { AMOUNT, invoiceRequest, LOST } from './kit.js';

const HOUR = 3_600_000;

const case007: CaseDefinition = {
  id: 'AOC-CASE-007',
  title: 'Provider binding substitution',
  requirements: ['AOC-REQ-003', 'AOC-REQ-007', 'AOC-REQ-009', 'AOC-REQ-010'],
  inputs: {
    lineage: 'case-007',
    invoices: ['invoice-007'],
    faults: { 'invoice-007': LOST, lookup: ['other_account'] },
    substitutions: [
      'account',
      'environment',
      'request',
      'profile',
      'profile version',
      'native key',
      'status source',
      'provider reference',
    ],
  },
  async run(k) {
    const g1 = await k.executor('case-007');
    await k.authority('budget-007');
    const p = await k.create(g1, 'original', 'invoice-007', 'budget-007');
    const other = {
      profileId: k.env.ed25519Profile.id,
      profileVersion: '1999-01-01',
      account: 'acct_other',
      environment: 'live',
    };
    const subs: [string, Record<string, string>][] = [
      ['account', { account: other.account }],
      ['environment', { environment: other.environment }],
      ['request', { requestDigest: digestJcs(invoiceRequest('invoice-007', AMOUNT * 10)) }],
      ['profile', { profileId: other.profileId }],
      ['profile version', { profileVersion: other.profileVersion }],
      ['native key', { nativeKey: 'baton:elsewhere:occ_x' }],
    ];
    for (const [name, expect] of subs)
      await k.refused(
        `entry with another ${name}`,
        k.env.svc.enter({ credential: g1.credential, occurrenceId: p.id, expect }),
        'provider_binding_conflict',
      );
    const withAccount = {
      ...k.createInput(g1, 'invoice-007-x', invoiceRequest('invoice-007-x'), 'budget-007'),
    };
    await k.refused(
      'create under another account',
      k.env.svc.create({ ...withAccount, provider: { ...withAccount.provider, account: other.account } }),
      'provider_binding_conflict',
    );
    await k.refused(
      'release naming another request',
      k.env.svc.release({
        credential: g1.credential,
        occurrenceId: p.id,
        requestDigest: digestJcs({ other: true }),
      }),
      'provider_binding_conflict',
    );
    k.check('still reserved and unchanged', JSON.stringify(await k.view(p.id)) === JSON.stringify(p));
    await k.send(await k.enter(g1, p.id), LOST);
    k.env.sandbox.addFault({ key: p.provider.nativeKey ?? '' }, 'other_account');
    k.check(
      'an authentic answer for another account is binding_mismatch',
      (await k.ask(p.id, 'by-key')).missingKnowledge === 'binding_mismatch',
    );
    await k.direct('direct-007', 'invoice-007-direct');
    const view = await k.view(p.id);
    const foreign = await k.ask(p.id, 'by-key', {
      ...view,
      provider: { ...view.provider, nativeKey: 'direct-007' },
    });
    k.check(
      'another payment’s authentic answer is binding_mismatch',
      foreign.missingKnowledge === 'binding_mismatch' &&
        foreign.occurrence.provider.providerReference === null,
    );
    const rogue = await k.env.svc.observe({
      occurrenceId: p.id,
      source: 'rogue-source',
      observedAt: k.env.clock.wallMs(),
      result: 'found',
      nativeStatus: 'succeeded',
      authentication: { verified: true, pin: 'rogue' },
      carried: { account: view.provider.account, nativeKey: view.provider.nativeKey ?? '' },
    });
    k.check('an unpinned status source is binding_mismatch', rogue.missingKnowledge === 'binding_mismatch');
    await k.refused(
      'release after entry',
      k.env.svc.release({
        credential: g1.credential,
        occurrenceId: p.id,
        requestDigest: p.provider.requestDigest,
      }),
      'already_entered',
    );
    const held = await k.view(p.id);
    k.check(
      'no substitution resolved, released or reauthorized it',
      held.unresolved && held.outcome === 'unknown' && (await k.entries(p.id)) === 1,
    );
    const genuine = await k.ask(p.id, 'by-key');
    k.check(
      'only the exactly bound, pinned source resolves it',
      genuine.effective && !genuine.occurrence.unresolved && k.effects(p) === 1,
    );
  },
};

const case008: CaseDefinition = {
  id: 'AOC-CASE-008',
  title: 'Missing retention or incomplete lookup',
  requirements: ['AOC-REQ-008', 'AOC-REQ-009', 'AOC-REQ-010', 'AOC-REQ-012'],
  inputs: {
    lineage: 'case-008',
    invoices: ['invoice-008'],
    faults: { 'invoice-008': LOST },
    steps: [
      '3 direct payments',
      'enter+send (answer lost)',
      'listing: 1 page of 2',
      'clock +25 h (retention 24 h)',
      'lookup',
      'listing',
    ],
  },
  async run(k) {
    const g1 = await k.executor('case-008');
    await k.authority('budget-008');
    for (const n of [1, 2, 3]) await k.direct(`direct-008-${n}`, `invoice-008-direct-${n}`);
    const { ticket } = await k.pay(g1, 'original', 'invoice-008', 'budget-008', LOST);
    const id = ticket.occurrence.id;
    const view = await k.view(id);
    const profile = (await k.env.svc.getProfile(view.provider.profileId, view.provider.profileVersion))
      .document;
    const narrow = new StatusSources({ keys: k.env.keys, clock: k.env.clock, pageSize: 2, maxPages: 1 });
    const cut = await k.env.svc.observe((await narrow.query(profile, view, 'listing')).observation);
    k.check(
      'absence from an incomplete listing is incomplete_listing',
      cut.missingKnowledge === 'incomplete_listing' && cut.occurrence.unresolved,
    );
    const before = await k.env.svc.getAuthority('budget-008');
    k.env.clock.advance(25 * HOUR);
    const lookup = await k.ask(id, 'by-key');
    const listing = await k.ask(id, 'listing');
    k.check('not found beyond retention (lookup)', lookup.missingKnowledge === 'not_found_beyond_retention');
    k.check(
      'not found beyond retention (listing)',
      listing.missingKnowledge === 'not_found_beyond_retention',
    );
    const after = await k.env.svc.getAuthority('budget-008');
    k.check('no refund', after.consumed === before.consumed && after.reserved === before.reserved);
    await k.refused('no retry right', k.enter(g1, id), 'already_entered');
    k.check(
      'still unresolved; one entry, one effect',
      (await k.view(id)).unresolved &&
        (await k.entries(id)) === 1 &&
        k.env.sandbox.effectCount(ticket.nativeKey ?? '') === 1,
    );
  },
};

export const BINDING_CASES: readonly CaseDefinition[] = [case007, case008];
