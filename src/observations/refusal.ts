/**
 * One refusal per rule (B3.1): every refusal is a BatonError with a stable code, the rule's name
 * and the JSON path of the offending value. Version, profile and `crit` refusals use
 * `observation_profile_unsupported`; everything else `observation_record_invalid`.
 */
import { BatonError } from '../core/index.js';

export type Rule =
  | 'bytes'
  | 'type'
  | 'string_length'
  | 'array_length'
  | 'unknown_member'
  | 'missing_member'
  | 'version'
  | 'profile'
  | 'crit'
  | 'enum'
  | 'reason_required'
  | 'reference_required'
  | 'decided_without_evidence'
  | 'analysis_revision_required'
  | 'correction_unbound'
  | 'independence_undisclosed'
  | 'secret_member'
  | 'credential_in_locator'
  | 'uri'
  | 'time'
  | 'digest'
  | 'envelope'
  | 'reserved_namespace'
  | 'producer_unauthenticated';

const PROFILE_RULES: ReadonlySet<Rule> = new Set(['version', 'profile', 'crit']);

export function refuse(rule: Rule, path: string, message: string): never {
  const code = PROFILE_RULES.has(rule) ? 'observation_profile_unsupported' : 'observation_record_invalid';
  throw new BatonError(code, `${path} ${message}`, { rule, path });
}
