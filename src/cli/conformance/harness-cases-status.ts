/**
 * A7 #3–#9 and #22: Mission Status answers from the reference issuer, each fault switch armed on
 * the issuer and the answer fetched and verified by Baton's Status client, then applied (or its
 * refusal recorded) through the harness, and a governed item dispatched against the result.
 */
import { decodeJwt } from 'jose';
import { isBatonError } from '../../core/errors.js';
import { statusRefusal, verifyStatusJws, type StatusFetchResult } from '../../missions/index.js';
import { STATE_FAULTS } from '../../issuer/faults.js';
import type { CaseDefinition } from './case.js';
import type { HarnessKit } from './harness-kit.js';

type HarnessCase = CaseDefinition<HarnessKit>;

function refusedAt(r: StatusFetchResult, check: string): boolean {
  return r.kind === 'unknown' && r.reason === 'refused' && r.refusal?.check === check;
}

/** Arm one Status fault, fetch once, and record whether it was refused at `check`. */
async function faulted(kit: HarnessKit, missionId: string, fault: string, check: string): Promise<void> {
  await kit.faults([fault]);
  const r = await kit.statusCheck(missionId);
  const got = r.kind === 'verified' ? 'verified' : `${r.reason}/${r.refusal?.check ?? '-'}`;
  kit.check(`fault ${fault}: refused at ${check} (got ${got})`, refusedAt(r, check));
}

/** Dispatch of a fresh item under the Mission: the stop code, or `running`. */
async function dispatchOutcome(kit: HarnessKit, missionId: string): Promise<string> {
  const e = await kit.executor(kit.name('lineage'));
  const item = await kit.enqueue(missionId, { lineage: e.lineage });
  return kit.refusal(kit.env.harness.dispatch(item.id, 'executor', e.generation));
}

/** A verified answer's compact JWS and the nonce it carries (to re-verify at another instant). */
async function verifiedJws(kit: HarnessKit, missionId: string): Promise<{ jws: string; nonce: string }> {
  const r = await kit.env.status.check(missionId);
  if (r.kind !== 'verified') throw new Error(`status not verified: ${r.reason}`);
  return { jws: r.status.jws, nonce: String(decodeJwt(r.status.jws)['nonce']) };
}

async function checkAt(kit: HarnessKit, missionId: string, jws: string, nonce: string, at: number) {
  const { pin } = kit.env;
  try {
    await verifyStatusJws(
      jws,
      kit.env.missionKeys,
      { issuer: pin.issuer, audience: pin.audience, clientId: pin.client.client_id, nonce, missionId },
      at,
    );
    return 'accepted';
  } catch (error) {
    const r = statusRefusal(error);
    if (r === undefined) throw error;
    return r.check;
  }
}

/** A7#9 by SET: the issuer's next SET carries `state`; the queued item stops and never runs. */
async function unrecognisedBySet(kit: HarnessKit, fault: string, state: string): Promise<void> {
  const m = await kit.mission();
  const e = await kit.executor(kit.name('lineage'));
  const item = await kit.enqueue(m, { lineage: e.lineage });
  const from = kit.env.pushes.length;
  await kit.faults([], [fault]);
  await kit.operate(m, 'suspend');
  const applied = kit.env.pushes.slice(from).map((p) => p.result);
  const stopped = await kit.item(item.id);
  const ev = (await kit.evidence(item.id)).at(-1);
  const shown = state === '' ? 'unknown' : state;
  kit.check(
    `SET state ${JSON.stringify(state)}: applied, item ${stopped.state}, evidence ${ev?.state}/${ev?.decision}`,
    applied.join() === 'applied' &&
      stopped.state === 'paused' &&
      ev?.state === shown &&
      ev.decision !== 'continue',
  );
  const code = await kit.refusal(kit.env.harness.dispatch(item.id, 'executor', e.generation));
  kit.check(
    `SET state ${JSON.stringify(state)}: dispatch refused (${code}), never running`,
    code === 'mission_not_active' && (await kit.item(item.id)).state !== 'running',
  );
}

/** A7#9 by Status: the verified answer carries `state`; the view is non-active, dispatch refused. */
async function unrecognisedByStatus(kit: HarnessKit, fault: string, state: string): Promise<void> {
  const m = await kit.mission();
  await kit.faults([fault]);
  const r = await kit.statusCheck(m);
  const view = await kit.env.harness.getView(kit.env.pin.issuer, m);
  const a = kit.env.harness.assessView(view);
  kit.check(
    `Status state ${JSON.stringify(state)}: verified, view non-active (${r.kind}, ${a.verdict})`,
    r.kind === 'verified' && r.status.state === state && a.verdict === 'non_active',
  );
  const code = await dispatchOutcome(kit, m);
  kit.check(
    `Status state ${JSON.stringify(state)}: dispatch refused (${code})`,
    code === 'mission_not_active',
  );
}

export const STATUS_CASES: readonly HarnessCase[] = [
  {
    id: 'HAR-CASE-003',
    title:
      'A7#3 alg none or HS256 keyed with the JWK bytes is refused; the view turns unknown and work pauses',
    requirements: ['MST-03', 'MST-04', 'HAR-06', 'MCO-01'],
    inputs: { faults: ['alg_none', 'hs256'], then: 'dispatch' },
    async run(kit) {
      const m = await kit.mission();
      await faulted(kit, m, 'alg_none', 'alg');
      await faulted(kit, m, 'hs256', 'alg');
      const view = await kit.env.harness.getView(kit.env.pin.issuer, m);
      kit.check(
        'the active view from the approval SET is no longer relied on',
        kit.env.harness.assessView(view).verdict !== 'active',
      );
      await kit.faults(['alg_none'], [], 5);
      const code = await dispatchOutcome(kit, m);
      await kit.clearFaults();
      kit.check(
        `dispatch pauses with mission_status_unavailable (got ${code})`,
        code === 'mission_status_unavailable',
      );
    },
  },
  {
    id: 'HAR-CASE-004',
    title: 'A7#4 a wrong or absent typ is refused',
    requirements: ['MST-03'],
    inputs: { faults: ['wrong_typ', 'typ_at_jwt', 'typ_secevent', 'no_typ'] },
    async run(kit) {
      const m = await kit.mission();
      // typ JWT, at+jwt, secevent+jwt and absent: each correctly signed otherwise.
      for (const fault of ['wrong_typ', 'typ_at_jwt', 'typ_secevent', 'no_typ'])
        await faulted(kit, m, fault, 'typ');
    },
  },
  {
    id: 'HAR-CASE-005',
    title: 'A7#5 exp now−31 s refused, now−29 s accepted; iat now+31 s refused',
    requirements: ['MST-04'],
    inputs: { skewSeconds: [29, 31] },
    async run(kit) {
      const m = await kit.mission();
      const { jws, nonce } = await verifiedJws(kit, m);
      const claims = decodeJwt(jws);
      const exp = Number(claims.exp) * 1000;
      const iat = Number(claims.iat) * 1000;
      kit.check('exp now−29 s accepted', (await checkAt(kit, m, jws, nonce, exp + 29_000)) === 'accepted');
      kit.check('exp now−31 s refused (exp)', (await checkAt(kit, m, jws, nonce, exp + 31_000)) === 'exp');
      kit.check('iat now+31 s refused (iat)', (await checkAt(kit, m, jws, nonce, iat - 31_000)) === 'iat');
    },
  },
  {
    id: 'HAR-CASE-006',
    title:
      "A7#6 wrong aud, sub, iss, a replayed earlier answer and another mission's answer are each refused",
    requirements: ['MST-01', 'MST-04', 'C-A10'],
    inputs: { faults: ['wrong_aud', 'wrong_sub', 'wrong_iss', 'other_mission'], replay: true },
    async run(kit) {
      const m = await kit.mission();
      await faulted(kit, m, 'wrong_aud', 'aud');
      await faulted(kit, m, 'wrong_sub', 'sub');
      await faulted(kit, m, 'wrong_iss', 'iss');
      await faulted(kit, m, 'other_mission', 'mission_id');
      // A replayed earlier answer: its nonce is not the one this request sent.
      const { jws } = await verifiedJws(kit, m);
      const fresh = await kit.env.status.check(m);
      const nonce = fresh.kind === 'verified' ? String(decodeJwt(fresh.status.jws)['nonce']) : '';
      kit.check(
        'a replayed earlier answer is refused at the nonce',
        (await checkAt(kit, m, jws, nonce, kit.env.clock.wallMs())) === 'nonce',
      );
    },
  },
  {
    id: 'HAR-CASE-007',
    title: 'A7#7 a rotated key is accepted; a key retired from jwks_uri still re-verifies archived answers',
    requirements: ['MST-06', 'MST-04'],
    inputs: { rotate: true, retire: true, fault: 'retired_key' },
    async run(kit) {
      const { reverifyArchivedStatus } = await import('../../missions/index.js');
      const m = await kit.mission();
      const before = await kit.env.status.check(m);
      const rotated = await kit.env.issuerAdmin('/admin/keys/rotate', { retire_previous: true });
      const after = await kit.env.status.check(m);
      kit.check(
        'after rotation the new kid verifies (unknown kid ⇒ JWKS refetched)',
        after.kind === 'verified' && after.status.kid === rotated.body['kid'],
      );
      let archived = 'not verified';
      if (before.kind === 'verified') {
        archived = await reverifyArchivedStatus(before.status, kit.env.archive).then(
          () => 'ok',
          (e: unknown) => (isBatonError(e) ? e.code : 'error'),
        );
      }
      kit.check(
        `an answer signed by the retired key re-verifies from the archive (${archived})`,
        archived === 'ok',
      );
      // A new answer signed by the key dropped from jwks_uri: one refetch, then refused (A3.2 step 4).
      await faulted(kit, m, 'retired_key', 'kid');
    },
  },
  {
    id: 'HAR-CASE-008',
    title: 'A7#8 active relied on until expires_at + 29 s, refetched after + 31 s; suspended never relied on',
    requirements: ['MST-05', 'HAR-03', 'HAR-06'],
    inputs: { reliance: ['+29s', '+31s'], suspended: '+1s', fault: 'past_expires_at' },
    async run(kit) {
      const m = await kit.mission();
      const first = await kit.statusCheck(m);
      if (first.kind !== 'verified') throw new Error('status not verified');
      const expiresAt = Date.parse(first.status.expiresAt);
      // The issuer's reliance (20 s) sits inside the class bound (capped by mission_max_stale_seconds).
      const { harness } = kit.env;
      kit.env.clock.advance(expiresAt + 29_000 - kit.env.clock.wallMs());
      const at29 = harness.assessView(await harness.getView(kit.env.pin.issuer, m), 'consequential_read');
      kit.check(`relied on at expires_at + 29 s (${at29.verdict})`, at29.verdict === 'active');
      const fetched = kit.env.fetches.length;
      kit.env.clock.advance(expiresAt + 31_000 - kit.env.clock.wallMs());
      const code = await dispatchOutcome(kit, m);
      kit.check(
        `at expires_at + 31 s dispatch refetches Status first (${kit.env.fetches.length - fetched} fetch, ${code})`,
        kit.env.fetches.length === fetched + 1 && code === 'accepted',
      );
      await kit.operate(m, 'suspend');
      const suspended = await kit.statusCheck(m);
      kit.env.clock.advance(1000);
      const a = harness.assessView(await harness.getView(kit.env.pin.issuer, m));
      kit.check(
        `suspended is not relied on at + 1 s (${a.verdict}, ${a.state})`,
        suspended.kind === 'verified' && a.verdict === 'non_active' && a.state === 'suspended',
      );
      // The draft example's shape (its expires_at precedes its own iat), signed by the issuer:
      // verified and archived, never relied on (A3.2 step 8).
      const other = await kit.mission();
      await kit.faults(['past_expires_at']);
      const past = await kit.statusCheck(other);
      const view = await harness.getView(kit.env.pin.issuer, other);
      const v = harness.assessView(view, 'consequential_read');
      kit.check(
        `expires_at before iat: verified, no reliance (${past.kind}, ${v.verdict})`,
        past.kind === 'verified' &&
          Date.parse(past.status.expiresAt) < Number(past.status.issuedAt) * 1000 &&
          v.verdict !== 'active',
      );
    },
  },
  {
    id: 'HAR-CASE-009',
    title: 'A7#9 an unrecognised state by Status or SET is non-active and never continues',
    requirements: ['MCO-01', 'HAR-24'],
    inputs: { states: ['frozen', 'ACTIVE', ''] },
    async run(kit) {
      for (const [fault, state] of Object.entries(STATE_FAULTS)) {
        await unrecognisedBySet(kit, fault, state);
        await unrecognisedByStatus(kit, fault, state);
      }
    },
  },
  {
    id: 'HAR-CASE-022',
    title: 'A7#22 an unsigned 200 {"state":"active"} or an RFC 9701 introspection JWT is refused',
    requirements: ['MST-03', 'MCO-01'],
    inputs: { faults: ['unsigned_200', 'introspection_jwt'] },
    async run(kit) {
      const m = await kit.mission();
      await faulted(kit, m, 'unsigned_200', 'media_type');
      await faulted(kit, m, 'introspection_jwt', 'media_type');
      const view = await kit.env.harness.getView(kit.env.pin.issuer, m);
      kit.check(
        'the view is not active after the refused answers',
        kit.env.harness.assessView(view).verdict !== 'active',
      );
    },
  },
];
