/** Provider entry and pre-entry release: each one transaction over lineage, occurrence and authority. */
import { digestBytes } from '../../core/digest.js';
import { BatonError } from '../../core/errors.js';
import type { JsonObject } from '../../core/json.js';
import { readEnter, readRelease, type EnterInput } from '../inputs.js';
import { checkExpectedBinding } from '../machine/binding.js';
import type { Caller } from '../machine/common.js';
import { decideEnter, type EnterDecision as Decided } from '../machine/enter.js';
import { decideRelease, decideStopRelease } from '../machine/release.js';
import { occurrenceSubject } from '../machine/common.js';
import type { AuthorityRecord, LineageRecord, OccurrenceRecord, PlannedEvent } from '../model.js';
import { nativeKeyHeader } from '../profile.js';
import type { MissionGateView, OccurrencesRepository } from '../ports.js';
import type { OccurrenceView, ServiceContext } from './context.js';
import {
  appendAll,
  authenticate,
  decided,
  executorActor,
  fail,
  refuseUnlessOwn,
  requireDomain,
  view,
} from './context.js';

/** What to send, exactly: returned only by the one successful entry. */
export interface EntryTicket {
  readonly occurrence: OccurrenceView;
  readonly request: JsonObject;
  readonly requestDigest: string;
  readonly nativeKey: string | null;
  readonly nativeKeyHeader: string | null;
  readonly profile: { readonly id: string; readonly version: string; readonly digest: string };
  readonly account: string;
  readonly environment: string;
}

interface Locked {
  readonly caller: Caller;
  readonly lineage: LineageRecord;
  readonly occurrence: OccurrenceRecord;
  readonly authority: AuthorityRecord;
}

/** Load and lock, in the one order every command uses: domain, lineage, occurrence, authority. */
async function lockAll(
  repo: OccurrencesRepository,
  credential: string,
  occurrenceId: string,
): Promise<Locked> {
  const caller = await authenticate(repo, credential);
  const lineage = await repo.lockLineage(caller.lineage);
  if (lineage === undefined) throw new BatonError('lineage_not_found', 'the credential names no lineage');
  const occurrence = await repo.lockOccurrence(occurrenceId);
  if (occurrence === undefined) throw new BatonError('occurrence_not_found', 'no such occurrence');
  const authority = await repo.lockAuthority(occurrence.authority.id);
  if (authority === undefined)
    throw new BatonError('store_corrupt', 'the occurrence names a missing authority');
  return { caller, lineage, occurrence, authority };
}

export interface Refused {
  readonly refused: NonNullable<MissionGateView['code']>;
}

export async function enter(ctx: ServiceContext, input: unknown): Promise<EntryTicket> {
  const cmd = readEnter(input);
  const answer = await ctx.uow.run(async (repo) => {
    await repo.prefetchEntry?.(digestBytes(cmd.credential), cmd.occurrenceId);
    return enterIn(ctx, repo, cmd);
  });
  return answered(answer, cmd.occurrenceId);
}

/** C-A25: a Mission stop is a recorded refusal — committed by then, answered here; provider never called. */
export function answered(answer: EntryTicket | Refused, occurrenceId: string): EntryTicket {
  if ('refused' in answer) {
    throw new BatonError(answer.refused, 'the Mission does not permit provider entry now', { occurrenceId });
  }
  return answer;
}

/** Locked and decided, nothing written yet: every AOC refusal of entry is thrown before this exists. */
export interface EntryDecision {
  readonly l: Locked;
  readonly d: Decided;
  readonly now: number;
}

export async function decideEntry(
  ctx: ServiceContext,
  repo: OccurrencesRepository,
  cmd: Required<EnterInput>,
): Promise<EntryDecision> {
  const now = ctx.clock.wallMs();
  const domain = await requireDomain(repo);
  const l = await lockAll(repo, cmd.credential, cmd.occurrenceId);
  // Another lineage's occurrence answers like a missing one, decided here (issue 16 §1).
  refuseUnlessOwn(l.caller, l.occurrence);
  const mismatch = checkExpectedBinding(l.occurrence, cmd.expect);
  if (mismatch !== undefined) fail(mismatch);
  const counts = await repo.countOpen(l.lineage.id);
  const { caller, lineage, occurrence, authority } = l;
  // AOC refusals first (nothing is written for them); then the Mission's last check (A3.6).
  const d = decided(decideEnter({ caller, lineage, occurrence, authority, domain, counts }, now));
  return { l, d, now };
}

/** The entry transition inside a transaction the caller opened (enter, create-and-enter). */
export async function enterIn(
  ctx: ServiceContext,
  repo: OccurrencesRepository,
  cmd: Required<EnterInput>,
): Promise<EntryTicket | Refused> {
  return applyEntry(repo, await decideEntry(ctx, repo, cmd));
}

export async function applyEntry(
  repo: OccurrencesRepository,
  { l, d, now }: EntryDecision,
): Promise<EntryTicket | Refused> {
  const actor = executorActor(l.caller);
  const gate = await repo.checkMissionGate(l.occurrence.id, actor);
  if (gate !== undefined && gate.decision === 'stop') return refuseByMission(repo, l, gate, now, actor);
  const request = await repo.getRequest(l.occurrence.id);
  const profile = await repo.getProfile(
    l.occurrence.provider.profileId,
    l.occurrence.provider.profileVersion,
  );
  if (request === undefined || profile === undefined)
    throw new BatonError('store_corrupt', 'the bound request or profile is missing');
  // Authority moves to consumed and entry is recorded BEFORE anything is sent (AOC-REQ-012).
  await repo.updateOccurrence(d.occurrence, l.occurrence.version);
  await repo.updateAuthority(d.authority, l.authority.version);
  const checked = gate === undefined ? [] : [missionChecked(l.occurrence.id, gate)];
  await appendAll(repo, [...checked, ...d.events], now, actor);
  const b = d.occurrence.provider;
  return {
    occurrence: view(d.occurrence),
    request,
    requestDigest: b.requestDigest,
    nativeKey: b.nativeKey,
    nativeKeyHeader: nativeKeyHeader(profile.document),
    profile: { id: b.profileId, version: b.profileVersion, digest: b.profileDigest },
    account: b.account,
    environment: b.environment,
  };
}

function missionChecked(occurrenceId: string, gate: MissionGateView): PlannedEvent {
  const subject = occurrenceSubject(occurrenceId);
  // Two literals rather than a conditional spread, which V8 builds at run time (issue 11 §8).
  return gate.checkedText === undefined
    ? { subject, type: 'mission_checked', body: gate.checked }
    : { subject, type: 'mission_checked', body: gate.checked, text: gate.checkedText };
}

/** Commit the stop: `mission_checked`, and on `terminate` the release of the reservation (A3.7). */
async function refuseByMission(
  repo: OccurrencesRepository,
  l: Locked,
  gate: MissionGateView,
  now: number,
  actor: string,
): Promise<Refused> {
  const events: PlannedEvent[] = [missionChecked(l.occurrence.id, gate)];
  if (gate.release) {
    const r = decided(decideStopRelease(l.occurrence, l.authority, 'mission_stop', now));
    await repo.updateOccurrence(r.occurrence, l.occurrence.version);
    await repo.updateAuthority(r.authority, l.authority.version);
    events.push(...r.events);
  }
  await appendAll(repo, events, now, actor);
  return { refused: gate.code ?? 'mission_not_active' };
}

export async function release(ctx: ServiceContext, input: unknown): Promise<OccurrenceView> {
  const cmd = readRelease(input);
  return ctx.uow.run(async (repo) => {
    const now = ctx.clock.wallMs();
    await requireDomain(repo);
    const l = await lockAll(repo, cmd.credential, cmd.occurrenceId);
    const d = decided(decideRelease(l, now));
    const mismatch = checkExpectedBinding(l.occurrence, { requestDigest: cmd.requestDigest });
    if (mismatch !== undefined) fail(mismatch);
    await repo.updateOccurrence(d.occurrence, l.occurrence.version);
    await repo.updateAuthority(d.authority, l.authority.version);
    await appendAll(repo, d.events, now, executorActor(l.caller));
    return view(d.occurrence);
  });
}
