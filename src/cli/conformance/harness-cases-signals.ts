/**
 * A7 #10, #11: lifecycle SETs pushed by the reference issuer with its SET fault switches armed,
 * answered by the runner's RFC 8935 receiver (parsePushedSet + the harness's apply), and a bad
 * stream bearer presented straight to the same receiver.
 */
import type { CaseDefinition } from './case.js';
import type { HarnessKit } from './harness-kit.js';

type HarnessCase = CaseDefinition<HarnessKit>;

/** Arm one SET fault, move the Mission, and return the answers the receiver gave meanwhile. */
async function pushedWith(kit: HarnessKit, missionId: string, fault: string, op: string) {
  const from = kit.env.pushes.length;
  await kit.faults([], [fault]);
  await kit.operate(missionId, op);
  return kit.env.pushes.slice(from);
}

const REFUSALS: ReadonlyArray<[string, string]> = [
  ['wrong_aud', 'invalid_audience'],
  ['wrong_iss', 'invalid_issuer'],
  ['bad_signature', 'invalid_key'],
  ['expired', 'invalid_request'],
  ['no_exp', 'invalid_request'],
  ['origin_mismatch', 'invalid_issuer'],
];

export const SIGNAL_CASES: readonly HarnessCase[] = [
  {
    id: 'HAR-CASE-010',
    title:
      'A7#10 SET replay: identical redelivery 202 without a second apply; other bytes 400; an older version is ignored',
    requirements: ['MSG-01', 'MSG-02', 'C-A18'],
    inputs: { faults: ['replay', 'replay_other_bytes', 'reorder'] },
    async run(kit) {
      const m = await kit.mission();
      const same = await pushedWith(kit, m, 'replay', 'suspend');
      kit.check(
        `identical redelivery: 202 twice, applied once (${same.map((p) => p.result).join(', ')})`,
        same.length === 2 &&
          same.every((p) => p.answer.status === 202) &&
          same.map((p) => p.result).join() === 'applied,duplicate',
      );
      const other = await pushedWith(kit, m, 'replay_other_bytes', 'resume');
      kit.check(
        `same jti, other bytes: 400 invalid_request (${other.map((p) => p.answer.status).join(', ')})`,
        other.length === 2 &&
          other[1]?.answer.status === 400 &&
          'body' in other[1].answer &&
          other[1].answer.body.err === 'invalid_request',
      );
      const view = await kit.env.harness.getView(kit.env.pin.issuer, m);
      kit.check(
        `the view holds the latest version (v${view?.signalVersion})`,
        view?.signalVersion === 3 && view.state === 'active',
      );
      // Reordered: revoke (v4) is held and arrives after a later one; the older one never regresses.
      await kit.faults([], ['reorder']);
      await kit.operate(m, 'suspend');
      await kit.operate(m, 'revoke');
      const after = await kit.env.harness.getView(kit.env.pin.issuer, m);
      kit.check(
        `an older version after a newer one is ignored (${kit.env.pushes.at(-1)?.result}, view ${after?.state})`,
        kit.env.pushes.at(-1)?.result === 'ignored' && after?.state === 'revoked',
      );
    },
  },
  {
    id: 'HAR-CASE-011',
    title:
      'A7#11 wrong aud/iss/signature, expired or no exp, origin ≠ iss, bad stream bearer: refused with their codes, no state change',
    requirements: ['MSG-01', 'HAR-10', 'C-A16', 'C-A17'],
    inputs: { faults: REFUSALS.map(([f]) => f), bearer: 'wrong' },
    async run(kit) {
      const m = await kit.mission();
      for (const [fault, err] of REFUSALS) {
        const before = await kit.viewVersion(m);
        const answers = await pushedWith(kit, m, fault, 'suspend');
        const a = answers[0]?.answer;
        const got = a === undefined ? 'none' : a.status === 202 ? '202' : `${a.status} ${a.body.err}`;
        kit.check(`fault ${fault}: 400 ${err} (got ${got})`, got === `400 ${err}`);
        kit.check(`fault ${fault}: the view is unchanged`, (await kit.viewVersion(m)) === before);
        // Back to active on both sides: the resume SET verifies and carries a newer version.
        await kit.operate(m, 'resume');
      }
      const res = await fetch(kit.env.receiverUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/secevent+jwt',
          authorization: 'Bearer not-the-stream-bearer',
        },
        body: 'e30.e30.e30',
      });
      const body = (await res.json()) as { err?: string };
      kit.check(
        `a bad stream bearer is 401 authentication_failed (${res.status} ${body.err})`,
        res.status === 401 && body.err === 'authentication_failed',
      );
    },
  },
];
