/**
 * The gateway's MissionGate backed by Baton (issue 15 §3; Mission build spec A3.6, HAR-16): before
 * a consequential tool call reaches Baton's create or the upstream, the agent's mission reference
 * in `_meta[rule.meta]` — `{"mission_id", "mission_origin"}` — is looked up in Baton's mission
 * view (`GET /v1/missions/{origin}/{id}`); a view that is not known-active-and-fresh is refreshed
 * once from the issuer through Baton (`POST …/check`). Only the exact verdict `active` lets the
 * call go on; a non-active Mission is `mission_not_active`, anything unknown, stale, refused or
 * unreachable `mission_status_unavailable` (fail closed, MCO-01). Provider entry repeats the check
 * in its own transaction for governed occurrences; this gate is the early refusal that keeps the
 * upstream from ever hearing of the call.
 */
import type { AdminClient } from '../client/index.js';
import { isBatonError } from '../core/errors.js';
import type { JsonValue } from '../core/json.js';
import type { MissionGate, MissionVerdict } from './gateway-types.js';

const ID = /^[A-Za-z0-9_-]{1,256}$/;

function refuse(
  code:
    | 'mission_not_active'
    | 'mission_status_unavailable'
    | 'mission_binding_missing'
    | 'mission_binding_invalid',
  message: string,
): MissionVerdict {
  return { ok: false, code, message };
}

/** `{mission_id, mission_origin}` from `_meta`, or why not. */
export function missionReference(
  value: JsonValue | undefined,
): { readonly id: string; readonly origin: string } | 'missing' | 'invalid' {
  if (value === undefined) return 'missing';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'invalid';
  const v = value;
  const keys = Object.keys(v);
  if (keys.some((k) => k !== 'mission_id' && k !== 'mission_origin')) return 'invalid';
  const id = v['mission_id'];
  const origin = v['mission_origin'];
  if (typeof id !== 'string' || !ID.test(id)) return 'invalid';
  if (typeof origin !== 'string' || !URL.canParse(origin) || origin.length > 512) return 'invalid';
  return { id, origin };
}

async function refreshed(admin: AdminClient, origin: string, id: string): Promise<MissionVerdict> {
  try {
    const answer = await admin.checkMission(origin, id);
    return answer.active
      ? { ok: true, enforced: true }
      : refuse('mission_not_active', `the Mission is ${answer.state.slice(0, 64)}`);
  } catch (error) {
    if (!isBatonError(error)) throw error;
    return refuse('mission_status_unavailable', `Mission Status could not be established (${error.code})`);
  }
}

export function batonMissionGate(admin: AdminClient): MissionGate {
  return {
    async check({ rule, meta }) {
      const ref = missionReference(meta[rule.meta]);
      if (ref === 'missing')
        return rule.required
          ? refuse(
              'mission_binding_missing',
              `_meta["${rule.meta}"] must name the Mission this call works under`,
            )
          : { ok: true, enforced: false };
      if (ref === 'invalid')
        return refuse(
          'mission_binding_invalid',
          `_meta["${rule.meta}"] must be {"mission_id", "mission_origin"}`,
        );
      let verdict: string;
      let state: string;
      try {
        // Judged for the policy's class: a high-consequence class needs a view at most 5 s old (HAR-25).
        const seen = await admin.getMissionView(ref.origin, ref.id, rule.actionClass);
        verdict = seen.assessment.verdict;
        state = seen.assessment.state;
      } catch (error) {
        if (!isBatonError(error)) throw error;
        return refuse('mission_status_unavailable', `Baton's mission view is unavailable (${error.code})`);
      }
      if (verdict === 'active') return { ok: true, enforced: true };
      if (verdict === 'non_active')
        return refuse('mission_not_active', `the Mission is ${state.slice(0, 64)}`);
      return refreshed(admin, ref.origin, ref.id);
    },
  };
}
