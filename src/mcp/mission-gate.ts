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
import { metaMember } from './derive.js';
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

const DIGEST = /^sha-256:[A-Za-z0-9_-]{43}$/;
const SCOPE = /^baton:[A-Za-z0-9._-]{1,128}#[a-z_]{1,64}$/;
const MEMBERS = ['mission_id', 'mission_origin', 'authority_hash', 'enforcement_scope'];

/** The Mission reference an agent put in `_meta` (HAR-02's caller members, less `stop_policy`). */
export interface MissionReference {
  readonly id: string;
  readonly origin: string;
  /** The Mission authority the call claims (`mission-authority-set` digest): Baton checks it at dispatch and entry. */
  readonly authorityHash?: string;
  readonly enforcementScope?: string;
}

/**
 * `{mission_id, mission_origin[, authority_hash][, enforcement_scope]}` from `_meta`, or why not —
 * the members a MissionBinding takes from its caller (src/missions/inputs.ts `readBinding`, same
 * forms). The reference is the agent's assertion (docs/mcp.md "Missions").
 */
export function missionReference(value: JsonValue | undefined): MissionReference | 'missing' | 'invalid' {
  if (value === undefined) return 'missing';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'invalid';
  const v = value;
  if (Object.keys(v).some((k) => !MEMBERS.includes(k))) return 'invalid';
  const id = v['mission_id'];
  const origin = v['mission_origin'];
  const hash = v['authority_hash'];
  const scope = v['enforcement_scope'];
  if (typeof id !== 'string' || !ID.test(id)) return 'invalid';
  if (typeof origin !== 'string' || !URL.canParse(origin) || origin.length > 512) return 'invalid';
  if (hash !== undefined && (typeof hash !== 'string' || !DIGEST.test(hash))) return 'invalid';
  if (scope !== undefined && (typeof scope !== 'string' || !SCOPE.test(scope))) return 'invalid';
  return {
    id,
    origin,
    ...(hash === undefined ? {} : { authorityHash: hash }),
    ...(scope === undefined ? {} : { enforcementScope: scope }),
  };
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
      const ref = missionReference(metaMember(meta, rule.meta));
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
          `_meta["${rule.meta}"] must be {"mission_id", "mission_origin"} (optionally "authority_hash", "enforcement_scope")`,
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
