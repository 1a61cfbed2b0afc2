/**
 * A7 #1, #2, #12–#16, #21: governed queue items and provider entry under Missions moved by SETs the
 * reference issuer pushes (or Status it answers); the sandbox's effect counter is the oracle.
 */
import type { JsonObject } from '../../core/json.js';
import { ACTION_CLASSES, DEFAULT_MATRIX, pin, type StopMatrix } from '../../missions/index.js';
import type { CaseDefinition } from './case.js';
import type { HarnessKit } from './harness-kit.js';
import { LOST } from './kit.js';

type HarnessCase = CaseDefinition<HarnessKit>;

/** A7#2's second half: the default matrix, but `revoked` terminates every class. */
const TERMINATE_MATRIX = pin({
  ...DEFAULT_MATRIX.matrix,
  id: 'conformance-terminate',
  rows: {
    ...DEFAULT_MATRIX.matrix.rows,
    revoked: Object.fromEntries(ACTION_CLASSES.map((c) => [c, 'terminate'])),
  },
} as StopMatrix);

export const QUEUE_CASES: readonly HarnessCase[] = [
  {
    id: 'HAR-CASE-001',
    title: 'A7#1 a pushed revocation between enqueue and dispatch suppresses the item, evidenced, 0 effects',
    requirements: ['HAR-11', 'HAR-13', 'HAR-26', 'MSG-02'],
    inputs: { push: ['approval v1', 'revoke v2'], then: 'dispatch' },
    async run(kit) {
      const m = await kit.mission();
      const e = await kit.executor(kit.name('lineage'));
      const item = await kit.enqueue(m, { lineage: e.lineage });
      await kit.operate(m, 'revoke');
      kit.check('the revocation SET was answered 202', kit.env.pushes.at(-1)?.answer.status === 202);
      kit.check('the item is suppressed', (await kit.item(item.id)).state === 'suppressed');
      const [ev] = await kit.evidence(item.id);
      kit.check(
        'signed evidence queue_suppressed / suppress / mission_not_active / revoked / signal',
        ev !== undefined &&
          [ev.event_type, ev.decision, ev.reason, ev.state, ev.state_source].join() ===
            'queue_suppressed,suppress,mission_not_active,revoked,signal',
      );
      await kit.refused(
        'dispatch after the revocation',
        kit.env.harness.dispatch(item.id, 'executor', e.generation),
        'work_item_not_dispatchable',
      );
      kit.check('the evidence chain verifies', await kit.chainVerifies());
      kit.check('no provider effect', (await kit.totalEffects()) === 0);
    },
  },
  {
    id: 'HAR-CASE-002',
    title:
      'A7#2 revoked after dispatch, before enter ⇒ 403 mission_not_active, still reserved, mission_checked committed, 0 effects; terminate ⇒ released',
    requirements: ['HAR-24', 'HAR-26', 'C-A25', 'AOC-REQ-008'],
    inputs: {
      push: ['approval v1', 'revoke v2'],
      between: ['dispatch', 'enter'],
      matrices: ['baton-default@1', 'conformance-terminate@1'],
    },
    async run(kit) {
      const m = await kit.mission();
      const { e, item } = await kit.running(m);
      const o = await kit.governed(e, item, 'dispatched');
      await kit.operate(m, 'revoke');
      await kit.refused('enter after the revocation', kit.enter(e, o.id), 'mission_not_active');
      const after = await kit.view(o.id);
      kit.check(`the occurrence stays reserved (${after.phase})`, after.phase === 'reserved');
      const checked = (await kit.occurrenceEvents(o.id)).find((x) => x.type === 'mission_checked');
      const body = (checked?.body ?? {}) as Record<string, unknown>;
      kit.check(
        'mission_checked committed with the revoked state and a stop decision',
        body['state'] === 'revoked' && body['decision'] !== 'continue',
      );
      kit.check(
        'no provider entry, no effect',
        (await kit.entries(o.id)) === 0 && (await kit.totalEffects()) === 0,
      );
      // The same under a matrix whose revoked row is `terminate`: the reservation is released.
      await kit.env.harness.registerMatrix(TERMINATE_MATRIX);
      const t = await kit.mission();
      const policy = { mission_binding: kit.binding(t, { stop_policy: TERMINATE_MATRIX.ref }) };
      const run = await kit.running(t, policy as unknown as JsonObject);
      const o2 = await kit.governed(run.e, run.item, 'terminated');
      await kit.operate(t, 'revoke');
      // The pushed revocation's propagation (A3.7) already terminated the item and released the
      // reservation in its own transaction, before any enter: the enter is refused on the phase.
      const released = await kit.view(o2.id);
      kit.check(`terminate ⇒ the reservation is released (${released.phase})`, released.phase === 'released');
      const refused = await kit.refusal(kit.enter(run.e, o2.id));
      kit.check(`enter after terminate is refused (${refused})`, refused !== 'accepted');
      kit.check('terminate ⇒ the item is terminated', (await kit.item(run.item.id)).state === 'terminated');
      kit.check(
        'still no entry, no effect',
        (await kit.entries(o2.id)) === 0 && (await kit.totalEffects()) === 0,
      );
    },
  },
  {
    id: 'HAR-CASE-012',
    title:
      'A7#12 suspend pauses; resume (active v3) dispatches after a check; a late suspended v2 is ignored',
    requirements: ['MSG-02', 'HAR-13', 'HAR-06'],
    inputs: { push: ['approval v1', 'suspend v2 (held, reordered)', 'resume v3'] },
    async run(kit) {
      const m = await kit.mission();
      const e = await kit.executor(kit.name('lineage'));
      const item = await kit.enqueue(m, { lineage: e.lineage });
      await kit.operate(m, 'suspend');
      const paused = await kit.item(item.id);
      kit.check(`suspended ⇒ the item is paused (${paused.state})`, paused.state === 'paused');
      await kit.operate(m, 'resume');
      await kit.env.harness.requeue(item.id, 'operator');
      const d = await kit.env.harness.dispatch(item.id, 'executor', e.generation);
      kit.check('after resume v3 the item dispatches', d.item.state === 'running');
      // The late v2: the issuer holds the next SET and delivers it after the following one.
      await kit.faults([], ['reorder']);
      await kit.operate(m, 'suspend');
      await kit.operate(m, 'resume');
      const view = await kit.env.harness.getView(kit.env.pin.issuer, m);
      const late = kit.env.pushes.at(-1);
      kit.check(
        `the late suspended SET is ignored (view ${view?.state} v${view?.signalVersion}, ${late?.result})`,
        view?.state === 'active' && view.signalVersion === 5 && late?.result === 'ignored',
      );
    },
  },
  {
    id: 'HAR-CASE-013',
    title:
      'A7#13 a silent stream past mission_max_stale_seconds ⇒ Status polled; 503 pauses; 404 unknown; 429 ⇒ Retry-After honoured',
    requirements: ['HAR-10', 'MSG-03', 'A3.5', 'C-A14'],
    inputs: { silentSeconds: 61, faults: ['http_503', 'http_404', 'http_429'] },
    async run(kit) {
      const m = await kit.mission();
      const e = await kit.executor(kit.name('lineage'));
      const item = await kit.enqueue(m, { lineage: e.lineage });
      kit.env.clock.advance(61_000);
      const before = kit.env.fetches.length;
      await kit.faults(['http_503']);
      await kit.refused(
        'dispatch with the stream silent and Status 503',
        kit.env.harness.dispatch(item.id, 'executor', e.generation),
        'mission_status_unavailable',
      );
      kit.check('the stale view made Baton poll Status', kit.env.fetches.length === before + 1);
      const ev = (await kit.evidence(item.id)).at(-1);
      kit.check(
        'paused with mission_state_stale',
        (await kit.item(item.id)).state === 'paused' &&
          ev?.event_type === 'mission_state_stale' &&
          ev.decision === 'pause',
      );
      await kit.faults(['http_404']);
      const nf = await kit.statusCheck(m);
      const view = await kit.env.harness.getView(kit.env.pin.issuer, m);
      kit.check(
        '404 is unknown, never revoked',
        nf.kind === 'unknown' && nf.reason === 'not_found' && view?.state === 'active',
      );
      await kit.faults(['http_429']);
      const rl = await kit.statusCheck(m);
      const wait = rl.kind === 'unknown' ? (rl.retryAfterSec ?? 0) : 0;
      kit.check('429 carries Retry-After', rl.kind === 'unknown' && rl.reason === 'rate_limited' && wait > 0);
      // A7#13 "429 ⇒ Retry-After honoured": inside it Baton sends nothing to the issuer, and the
      // check is unknown at once (never active); once it passed, Status is asked again.
      const sent = kit.env.issuer.state.statusRequests;
      kit.env.clock.advance(Math.max(0, wait - 1) * 1000);
      const held = await kit.statusCheck(m);
      kit.check(
        `inside Retry-After (${wait} s) nothing is sent: rate_limited at once`,
        held.kind === 'unknown' &&
          held.reason === 'rate_limited' &&
          held.backedOff === true &&
          kit.env.issuer.state.statusRequests === sent,
      );
      kit.env.clock.advance(1000);
      const again = await kit.statusCheck(m);
      kit.check(
        'after Retry-After Status is asked again',
        again.kind === 'verified' && kit.env.issuer.state.statusRequests === sent + 1,
      );
    },
  },
  {
    id: 'HAR-CASE-014',
    title:
      'A7#14 a retry after revocation is suppressed (never queued), evidenced; a retry of an entered occurrence only reconciles (effects stay 1)',
    requirements: ['HAR-12', 'HAR-13', 'HAR-26', 'C-A28', 'AOC-REQ-010'],
    inputs: {
      retry: ['of an entered occurrence whose answer was lost (entered, unresolved)', 'after revocation'],
      faults: LOST,
    },
    async run(kit) {
      const m = await kit.mission();
      const { e, item } = await kit.running(m);
      const o = await kit.governed(e, item, 'paid');
      // A7#14 "retry of an entered occurrence": the provider applied the payment but its answer and
      // webhook were lost, so the occurrence is entered and still unresolved when the retry comes —
      // the case a re-entry would pay twice (AOC-REQ-010), not an already-resolved one.
      const first = await kit.send(await kit.enter(e, o.id), LOST);
      kit.check(
        'the answer was lost: entered, unresolved, effects 1',
        first.ack.missingKnowledge === 'unavailable' &&
          (await kit.view(o.id)).unresolved &&
          kit.effects(await kit.view(o.id)) === 1,
      );
      await kit.env.harness.complete(item.id, 'executor');
      const retry = await kit.env.harness.retry(item.id, 'executor');
      await kit.env.harness.dispatch(retry.id, 'executor', e.generation);
      const again = await kit.env.svc.create({
        ...kit.createInput(
          e,
          retry.idempotencyKey ?? '',
          { amount: 1000, currency: 'eur', payee: 'acme-supplies', invoice: retry.idempotencyKey ?? '' },
          'payouts',
        ),
        workItemId: retry.id,
      });
      kit.check(
        'the retry resolves to the original occurrence',
        !again.created && again.occurrence.id === o.id,
      );
      kit.check('the original is still unresolved at the retry', (await kit.view(o.id)).unresolved);
      await kit.refused('re-entering it', kit.enter(e, o.id), 'already_entered');
      // Reconcile only: asking the provider resolves it from the one effect, nothing sent again.
      await kit.reconciler(e.lineage).run();
      const settled = await kit.view(o.id);
      kit.check(
        'reconcile only: resolved success, one entry, effects stay 1',
        settled.outcome === 'success' &&
          !settled.unresolved &&
          (await kit.entries(o.id)) === 1 &&
          kit.effects(settled) === 1,
      );
      await kit.env.harness.complete(retry.id, 'executor');
      await kit.operate(m, 'revoke');
      // Seed §7 (HAR-13), A7#14: the retry after revocation is created suppressed, never queued,
      // with signed evidence (HAR-26), and is not dispatched.
      const late = await kit.env.harness.retry(retry.id, 'executor');
      kit.check('it is suppressed', (await kit.item(late.id)).state === 'suppressed');
      const [ev] = await kit.evidence(late.id);
      kit.check(
        'signed evidence queue_suppressed / suppress / mission_not_active / revoked',
        ev !== undefined &&
          [ev.event_type, ev.decision, ev.reason, ev.state].join() ===
            'queue_suppressed,suppress,mission_not_active,revoked',
      );
      await kit.refused(
        'dispatching it',
        kit.env.harness.dispatch(late.id, 'executor', e.generation),
        'work_item_not_dispatchable',
      );
    },
  },
  {
    id: 'HAR-CASE-015',
    title: 'A7#15 an item past expires_at is suppressed although the Mission is active',
    requirements: ['HAR-15', 'HAR-26'],
    inputs: { expiresInSeconds: 1 },
    async run(kit) {
      const m = await kit.mission();
      const e = await kit.executor(kit.name('lineage'));
      const expires = new Date(kit.env.clock.wallMs() + 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const item = await kit.enqueue(m, { lineage: e.lineage, expires_at: expires });
      kit.env.clock.advance(2000);
      await kit.refusal(kit.env.harness.dispatch(item.id, 'executor', e.generation));
      const ev = (await kit.evidence(item.id)).at(-1);
      kit.check(
        `queue_suppressed / queue_item_expired / state active (${ev?.event_type}, ${ev?.reason}, ${ev?.state})`,
        ev?.event_type === 'queue_suppressed' && ev.reason === 'queue_item_expired' && ev.state === 'active',
      );
      kit.check('the item is suppressed', (await kit.item(item.id)).state === 'suppressed');
    },
  },
  {
    id: 'HAR-CASE-016',
    title:
      'A7#16 governed work without a Mission binding is refused at create; a legacy unbound row is refused at resume (missing_mission_binding)',
    requirements: ['HAR-01', 'HAR-07'],
    inputs: { binding: null, legacyRow: 'binding columns set to NULL in the scratch store' },
    async run(kit) {
      await kit.refused('a governed item without binding', kit.enqueue(null), 'mission_binding_missing');
      // A legacy row (written before bindings existed): made by editing the runner's own scratch
      // store, the only way such a row arises, then dispatched through the harness.
      const m = await kit.mission();
      const item = await kit.enqueue(m);
      await kit.env.engine.transaction((tx) =>
        tx.run('UPDATE msn_items SET binding = NULL, mission_origin = NULL, mission_id = NULL WHERE id = ?', [
          item.id,
        ]),
      );
      await kit.refused(
        'the legacy row is dispatched',
        kit.env.harness.dispatch(item.id, 'executor'),
        'mission_binding_missing',
      );
      const ev = (await kit.evidence(item.id)).at(-1);
      kit.check(
        `resume_suppressed / suppress / missing_mission_binding / state unknown (${ev?.event_type}, ${ev?.reason})`,
        ev?.event_type === 'resume_suppressed' &&
          ev.decision === 'suppress' &&
          ev.reason === 'missing_mission_binding' &&
          ev.state === 'unknown',
      );
      kit.check('the legacy row never runs', (await kit.item(item.id)).state === 'suppressed');
    },
  },
  {
    id: 'HAR-CASE-021',
    title:
      'A7#21 takeover with a running item: the successor passes a check before enter; the predecessor is generation_retired',
    requirements: ['HAR-06', 'AOC-REQ-006'],
    inputs: { takeover: 'with a running item' },
    async run(kit) {
      const m = await kit.mission();
      const { e, item } = await kit.running(m);
      const o = await kit.governed(e, item, 'predecessor');
      const queued = await kit.enqueue(m, { lineage: e.lineage });
      const successor = await kit.executor(e.lineage);
      await kit.refused('the predecessor enters', kit.enter(e, o.id), 'generation_retired');
      await kit.refused(
        'the predecessor dispatches',
        kit.env.harness.dispatch(queued.id, 'executor', e.generation),
        'generation_retired',
      );
      kit.check('nothing was entered for the predecessor', (await kit.entries(o.id)) === 0);
      const { item: mine } = await kit.env.harness.dispatch(queued.id, 'executor', successor.generation);
      const next = await kit.governed(successor, mine, 'successor');
      await kit.send(await kit.enter(successor, next.id));
      const types = (await kit.occurrenceEvents(next.id)).map((x) => x.type);
      kit.check(
        'the successor passed a Mission check (mission_checked) before its entry',
        types.includes('mission_checked') &&
          types.indexOf('mission_checked') < types.indexOf('provider_entered'),
      );
    },
  },
];
