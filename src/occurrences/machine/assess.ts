/**
 * How one provider observation is judged against the pinned profile and the immutable binding
 * (AOC-REQ-007, -009, -011; AOC-CASE-004, -007, -008, -009). Only an observation that is
 * authenticated by the source's pin, bound to this exact binding and attempt, fresh, complete and
 * mapped by the profile may move the state; anything else is missing knowledge with a reason.
 */
import type { JsonValue } from '../../core/json.js';
import type { MissingKnowledgeReason, OccurrenceRecord } from '../model.js';
import { findStatusSource, mapStatus, readProviderReference, referenceMatches } from '../profile.js';
import { pinIdentities } from '../profile-parts.js';
import type { AuthenticationPin, ProviderProfile, StatusMapping, StatusSource } from '../profile-types.js';
import { OUTCOME_RANK, readingsContradict } from './readings.js';

export const ACKNOWLEDGEMENT_SOURCE = 'acknowledgement';
/** How far an observation may predate the recorded entry and still be about this attempt. */
export const ENTRY_SKEW_MS = 60_000;

export const OBSERVATION_RESULTS = ['found', 'not_found', 'unavailable'] as const;
export type ObservationResult = (typeof OBSERVATION_RESULTS)[number];

/** The binding fields a provider answer carried (null when the answer did not carry that field). */
export interface CarriedBinding {
  readonly account: string | null;
  readonly environment: string | null;
  readonly requestDigest: string | null;
  readonly nativeKey: string | null;
  readonly providerReference: string | null;
  /**
   * Format 2 read rules: the amount and the unit value (e.g. `usd`) the answer states. Compared
   * with the authority the occurrence spends, through the profile's tie (AOC-REQ-003, -012): an
   * answer about another amount or currency is about another payment.
   */
  readonly amount?: number;
  readonly unit?: string;
}

/**
 * Another item of the same answer that the status-source layer matched to the occurrence (a
 * listing page holding several events for its native key or reference): its native status and
 * the binding fields it carried. AOC-CASE-009: the service judges all of them together.
 */
export interface MatchedItem {
  readonly nativeStatus: string | null;
  readonly carried: CarriedBinding;
}

/** How many other matching items one observation may carry (a listing page's size bounds it). */
export const MAX_ALSO_MATCHED = 100;

export interface ObservationCommand {
  readonly occurrenceId: string;
  /** A status source id of the profile, or `acknowledgement` for the answer to the entry call. */
  readonly source: string;
  readonly observedAt: number;
  /**
   * Only on an acknowledgement the executor dated beyond the future skew: the time it claimed,
   * kept in the evidence body as a claim; `observedAt` is then the server's time (service/observe.ts).
   */
  readonly claimedObservedAt?: number;
  readonly result: ObservationResult;
  readonly nativeStatus: string | null;
  readonly response: JsonValue | null;
  /** The verdict of Baton's trusted status-source layer, never an executor's claim. */
  readonly authentication: { readonly verified: boolean; readonly pin: string | null };
  readonly carried: CarriedBinding;
  /** For listings: whether every page for the bound account and interval was read. */
  readonly complete: boolean;
  /** The answer's other items matching the occurrence (empty for a single-object answer). */
  readonly alsoMatched: readonly MatchedItem[];
}

export interface Assessment {
  readonly mapping: StatusMapping | null;
  readonly missing: MissingKnowledgeReason | null;
  /** A provider reference first seen in an authenticated, exactly bound answer (written once). */
  readonly bindReference: string | null;
  /**
   * AOC-CASE-009: one authenticated answer held several items bound to this attempt that
   * disagree (different references, contradicting interpretations): the
   * occurrence goes to conflict and no item's reading is picked.
   */
  readonly conflicting?: true;
  /** With `alsoMatched`: the native status of the item whose reading was taken. */
  readonly nativeStatus?: string | null;
}

interface SourceView {
  readonly pin: AuthenticationPin;
  readonly freshnessSeconds: number;
  readonly source: StatusSource | null;
}

function sourceView(profile: ProviderProfile, id: string): SourceView | undefined {
  if (id === ACKNOWLEDGEMENT_SOURCE) {
    const ack = profile.acknowledgement;
    return { pin: ack.authentication, freshnessSeconds: ack.freshnessSeconds, source: null };
  }
  const source = findStatusSource(profile, id);
  return source && { pin: source.authentication, freshnessSeconds: source.freshnessSeconds, source };
}

function pinMatches(pin: AuthenticationPin, presented: string | null): boolean {
  return presented !== null && pinIdentities(pin).includes(presented);
}

const miss = (missing: MissingKnowledgeReason, bindReference: string | null = null): Assessment => ({
  mapping: null,
  missing,
  bindReference,
});

/** The reference the answer carries: stated by the status layer, or read by the profile's rule. */
function answerReference(
  profile: ProviderProfile,
  cmd: ObservationCommand,
): { ok: boolean; value: string | null } {
  const read = readProviderReference(profile, cmd.response);
  if (read.kind === 'malformed') return { ok: false, value: null };
  const fromBody = read.kind === 'found' ? read.value : null;
  const stated = cmd.carried.providerReference;
  if (stated !== null && fromBody !== null && stated !== fromBody) return { ok: false, value: null };
  if (stated !== null && !referenceMatches(profile, stated)) return { ok: false, value: null };
  return { ok: true, value: stated ?? fromBody };
}

/** A stated amount must be the authority amount; a stated unit must map, by the tie, to its unit. */
function authorityMatches(o: OccurrenceRecord, profile: ProviderProfile, c: CarriedBinding): boolean {
  if (c.amount !== undefined && c.amount !== o.authority.amount) return false;
  if (c.unit === undefined) return true;
  const tie = profile.authority;
  if (tie === undefined || !('amount' in tie) || typeof tie.unit === 'string') return false;
  const values = tie.unit.values;
  return Object.hasOwn(values, c.unit) && values[c.unit] === o.authority.unit;
}

/**
 * The native key the answer carries FOR THIS BINDING. A source whose rule reads the key of the
 * request that caused the event (`nativeKeyOf: causing_request`, e.g. Stripe's
 * `/request/idempotency_key`) carries the occurrence's own key only for events its entry request
 * caused; any other key (a cancel's, a capture's) is another request's and says nothing about this
 * occurrence, so it is no key at all here and the item must anchor by the bound reference. The
 * carried value itself stays in the evidence untouched (AOC-CASE-009).
 */
function keyFor(profile: ProviderProfile, cmd: ObservationCommand, bound: string | null): string | null {
  const carried = cmd.carried.nativeKey;
  if (carried === null || carried === bound) return carried;
  const causing = findStatusSource(profile, cmd.source)?.read?.nativeKeyOf === 'causing_request';
  return causing ? null : carried;
}

/**
 * Exact binding: the account must be carried and equal; any other carried field must equal the
 * binding; and the answer must be anchored to this attempt by the native key or the known reference.
 */
function bindingOf(o: OccurrenceRecord, profile: ProviderProfile, cmd: ObservationCommand) {
  const b = o.provider;
  const c = cmd.carried;
  const answered = answerReference(profile, cmd);
  const reference = answered.value;
  const key = keyFor(profile, cmd, b.nativeKey);
  if (!answered.ok || c.account !== b.account) return { ok: false as const };
  if (c.environment !== null && c.environment !== b.environment) return { ok: false as const };
  if (c.requestDigest !== null && c.requestDigest !== b.requestDigest) return { ok: false as const };
  if (key !== null && key !== b.nativeKey) return { ok: false as const };
  if (!authorityMatches(o, profile, c)) return { ok: false as const };
  if (reference !== null && b.providerReference !== null && reference !== b.providerReference) {
    return { ok: false as const };
  }
  const byKey = key !== null && b.nativeKey !== null;
  const byReference = reference !== null && b.providerReference !== null;
  // A provider without native keys: the signed answer to the entry call anchors by request digest.
  const byAck = cmd.source === ACKNOWLEDGEMENT_SOURCE && b.nativeKey === null && c.requestDigest !== null;
  if (!byKey && !byReference && !byAck) return { ok: false as const };
  const bindReference = reference !== null && b.providerReference === null ? reference : null;
  return { ok: true as const, bindReference };
}

function absence(
  o: OccurrenceRecord,
  view: SourceView,
  cmd: ObservationCommand,
  now: number,
): MissingKnowledgeReason {
  const source = view.source;
  const enteredAt = o.enteredAt ?? now;
  if (source !== null && now - enteredAt > source.retentionSeconds * 1000)
    return 'not_found_beyond_retention';
  if (source === null || source.completeness === 'best_effort' || !cmd.complete) return 'incomplete_listing';
  // Within retention and complete, absence is still not proof of non-entry (AOC-REQ-008/-009).
  return 'not_found';
}

const CONFLICTING: Assessment = {
  mapping: null,
  missing: 'conflict',
  bindReference: null,
  conflicting: true,
};

/**
 * AOC-CASE-009, for an answer holding several items about the occurrence (a listing walk): each is
 * judged for the binding on its own, so the verdict never depends on their order. If the items
 * bound to the attempt name different references, or two of their mapped readings contradict, the
 * answer is conflicting. If one of them has a native status the profile does not map (or could not
 * be spelled, `_unreadable`), the answer says something about the attempt that cannot be judged:
 * `unmapped_status`, whatever the others say (AOC-CASE-009: no favourable reading is selected;
 * unknown or unmapped native states leave the occurrence unresolved). Otherwise they agree, and
 * the item with the furthest reading stands for the answer (ties by native status): the state
 * applying them one by one would reach.
 */
function oneItem(
  o: OccurrenceRecord,
  profile: ProviderProfile,
  cmd: ObservationCommand,
): ObservationCommand | 'conflicting' | 'unmapped' {
  const items: ObservationCommand[] = [
    cmd,
    ...cmd.alsoMatched.map((m) => ({ ...cmd, ...m, response: null, alsoMatched: [] })),
  ];
  // An item not bound to this attempt (another reference once one is bound, another amount) says
  // nothing about it, as it would alone (`binding_mismatch`); it stays in the evidence.
  const bound = items.filter((i) => bindingOf(o, profile, i).ok);
  if (bound.length === 0) return cmd; // none is about this attempt: judged below as the first
  const refs = new Set(bound.map((i) => answerReference(profile, i).value).filter((r) => r !== null));
  if (refs.size > 1) return 'conflicting';
  const read = bound.flatMap((i) => {
    const m = i.nativeStatus === null ? undefined : mapStatus(profile, i.nativeStatus);
    return m === undefined ? [] : [{ i, m }];
  });
  for (const a of read) for (const b of read) if (readingsContradict(a.m, b.m)) return 'conflicting';
  if (read.length < bound.length) return 'unmapped';
  const [best] = read.sort(
    (a, b) =>
      OUTCOME_RANK[b.m.interpretation] - OUTCOME_RANK[a.m.interpretation] ||
      String(a.i.nativeStatus).localeCompare(String(b.i.nativeStatus)),
  );
  return best?.i ?? bound[0] ?? cmd;
}

export function assessObservation(
  o: OccurrenceRecord,
  profile: ProviderProfile,
  command: ObservationCommand,
  now: number,
): Assessment {
  if (o.enteredAt === null) return miss('no_attempt');
  const view = sourceView(profile, command.source);
  // AOC-CASE-007: a status source the profile does not pin is a substitution.
  if (view === undefined) return miss('binding_mismatch');
  if (command.result === 'unavailable') return miss('unavailable');
  if (!command.authentication.verified || !pinMatches(view.pin, command.authentication.pin))
    return miss('unauthenticated');
  // A listing match is judged with every item the walk met about the occurrence (AOC-CASE-009); a
  // walk cut by its page bound is judged on the pages read (docs/providers.md "Status sources": a
  // contradiction beyond them is not seen), one cut by a page it could not trust is unavailable.
  const entered = o.enteredAt;
  if (command.alsoMatched.length === 0) return assessItem(o, entered, profile, view, command, now);
  const cmd = oneItem(o, profile, command);
  if (cmd === 'conflicting') return CONFLICTING;
  if (cmd === 'unmapped') return miss('unmapped_status');
  return { ...assessItem(o, entered, profile, view, cmd, now), nativeStatus: cmd.nativeStatus };
}

/** The checks from the binding on (docs/occurrences.md "Observations", steps 5 to 9). */
function assessItem(
  o: OccurrenceRecord,
  enteredAt: number,
  profile: ProviderProfile,
  view: SourceView,
  cmd: ObservationCommand,
  now: number,
): Assessment {
  const binding = bindingOf(o, profile, cmd);
  // AOC-REQ-007: an answer that cannot be bound to the exact prior attempt leaves it unresolved.
  if (!binding.ok || cmd.observedAt < enteredAt - ENTRY_SKEW_MS) return miss('binding_mismatch');
  const ref = binding.bindReference;
  if (now - cmd.observedAt > view.freshnessSeconds * 1000) return miss('stale', ref);
  if (cmd.result === 'not_found') return miss(absence(o, view, cmd, now), ref);
  const mapping = cmd.nativeStatus === null ? undefined : mapStatus(profile, cmd.nativeStatus);
  if (mapping === undefined) return miss('unmapped_status', ref);
  return { mapping, missing: null, bindReference: ref };
}
