/**
 * The shapes `perform` acts on, checked before it acts: the entry ticket it hands to the provider
 * adapter, the occurrence views it reads, the adapter's acknowledgement and acknowledge-and-settle's
 * answer. Checking top-level member names is not enough: an answer whose ticket has no native key
 * would send the provider call without an idempotency key (AOC-REQ-010: never send without a
 * ticket), and a settle answer with `occurrence: null` would lose the provider's answer to a
 * TypeError (AOC-REQ-004). Each check returns why the value is not the shape, or undefined.
 */
import { EFFECTS, PHASES } from '../occurrences/model.js';

/** Why an answer is not what its call promises; undefined when it is. */
export type Why = string | undefined;

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export const isString = (v: unknown): v is string => typeof v === 'string' && v !== '';
const isStringOrNull = (v: unknown): boolean => v === null || isString(v);

/** The members of an occurrence view perform reads (id, phase, effect, conflict, unresolved). */
export function occurrenceViewFault(v: unknown, at: string): Why {
  if (!isRecord(v)) return `"${at}" that is not an occurrence`;
  if (!isString(v['id'])) return `"${at}" without an id`;
  if (!(PHASES as readonly unknown[]).includes(v['phase'])) return `"${at}" without a known phase`;
  if (!(EFFECTS as readonly unknown[]).includes(v['effect'])) return `"${at}" without a known effect`;
  if (typeof v['conflict'] !== 'boolean') return `"${at}" without a boolean conflict`;
  if (typeof v['unresolved'] !== 'boolean') return `"${at}" without a boolean unresolved`;
  return undefined;
}

/**
 * An entry ticket as the adapter needs it: the occurrence it enters, the exact request (an
 * object), its digest, the native key (a string, or null when the profile gives none — never
 * absent: `undefined` would pass an adapter's `nativeKey === null` guard) and the profile pin.
 */
export function ticketFault(v: unknown, at = 'ticket'): Why {
  if (!isRecord(v)) return `"${at}" that is not an entry ticket`;
  const occurrence = occurrenceViewFault(v['occurrence'], `${at}.occurrence`);
  if (occurrence !== undefined) return occurrence;
  if (!isRecord(v['request'])) return `"${at}.request" that is not an object`;
  if (!isString(v['requestDigest'])) return `"${at}" without a requestDigest`;
  if (!isStringOrNull(v['nativeKey'])) return `"${at}.nativeKey" that is neither a string nor null`;
  if (!isStringOrNull(v['nativeKeyHeader']))
    return `"${at}.nativeKeyHeader" that is neither a string nor null`;
  const p = v['profile'];
  if (!isRecord(p) || !isString(p['id']) || !isString(p['version']) || !isString(p['digest'])) {
    return `"${at}.profile" that is not a profile pin`;
  }
  return undefined;
}

/** create-and-enter's answer: the occurrence, `created`, and a ticket for it or null. */
export function createAndEnterFault(v: Record<string, unknown>): Why {
  const occurrence = occurrenceViewFault(v['occurrence'], 'occurrence');
  if (occurrence !== undefined) return occurrence;
  if (typeof v['created'] !== 'boolean') return '"created" that is not a boolean';
  const ticket = v['ticket'];
  if (ticket === null) return undefined;
  const fault = ticketFault(ticket);
  if (fault !== undefined) return fault;
  const ticketId = (ticket as { occurrence: { id: string } }).occurrence.id;
  if (ticketId !== (v['occurrence'] as { id: string }).id) return 'a ticket for another occurrence';
  return undefined;
}

const isReasonOrNull = isStringOrNull;

/** acknowledge-and-settle's answer: the occurrence, its report, what is unknown, the ack's result. */
export function settledFault(v: Record<string, unknown>): Why {
  const occurrence = occurrenceViewFault(v['occurrence'], 'occurrence');
  if (occurrence !== undefined) return occurrence;
  if (!isRecord(v['report'])) return '"report" that is not an object';
  if (!isReasonOrNull(v['missingKnowledge'])) return '"missingKnowledge" that is neither a reason nor null';
  if (v['errorCode'] !== undefined && !isString(v['errorCode'])) return '"errorCode" that is not a code';
  const a = v['acknowledgement'];
  if (!isRecord(a)) return '"acknowledgement" that is not an object';
  if (!isReasonOrNull(a['missingKnowledge'])) {
    return '"acknowledgement.missingKnowledge" that is neither a reason nor null';
  }
  return undefined;
}

/**
 * An adapter's acknowledgement as the executor API takes it: the occurrence it answers for, when
 * (epoch ms or RFC 3339 text), the result and the carried binding fields. Anything else — `{}`, a missing
 * `acknowledgement` — is not one, and recording it is impossible.
 */
export function acknowledgementFault(v: unknown): Why {
  if (!isRecord(v)) return 'no acknowledgement';
  if (!isString(v['occurrenceId'])) return 'an acknowledgement without an occurrenceId';
  const at = v['observedAt'];
  if (!(typeof at === 'number' && Number.isFinite(at)) && !isString(at)) {
    return 'an acknowledgement without an observedAt (epoch ms or RFC 3339)';
  }
  if (!isString(v['result'])) return 'an acknowledgement without a result';
  if (!isRecord(v['carried'])) return 'an acknowledgement without a carried object';
  return undefined;
}
