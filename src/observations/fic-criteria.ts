/**
 * C-B7: which of C1–C5 one entered occurrence fails, from facts the store read out of the evidence
 * log (never from the occurrence table alone, which is what a tamperer would edit).
 * C1 its chain verifies (and the occurrence row agrees with it about the entry: `entered_at`,
 * `lineage`); C2 the entering generation = captured = the lineage's generation at that
 * seq; C3 the lineage chain verifies and holds the matching `generation_advanced`; C4 the provider
 * binding recomputes from `occurrence_created` (request digest and native key entered are the
 * ones bound, and the stored binding has the created digest); C5 a Mission-bound occurrence has
 * a `mission_checked` answer `continue` for its Mission before its entry. "Mission-bound" is the
 * harness's gate row for the occurrence (`msn_occurrence_gates`, what provider entry reads), read
 * by the store: an occurrence's own events never say it (C-B7 C5, B7-10).
 */
import { digestJcs } from '../core/index.js';
import type { FicCriterion } from './metrics.js';

export interface ChainEvent {
  readonly seq: number;
  readonly type: string;
  readonly body: unknown;
}

export interface ActionEvidence {
  readonly occurrence: string;
  readonly chainVerifies: boolean;
  /** The occurrence row agrees with the chain about the entry (time, lineage): else C1 fails (B7-10). */
  readonly rowAgreesWithLog: boolean;
  readonly events: readonly ChainEvent[];
  readonly lineageChainVerifies: boolean;
  readonly lineageEvents: readonly ChainEvent[];
  /** The provider binding as the occurrence row holds it now, if the row exists. */
  readonly storedBinding: Readonly<Record<string, unknown>> | null;
  /** The Mission the occurrence is gated to (its harness gate row), or null when it is not governed. */
  readonly missionGate: { readonly origin: string; readonly id: string } | null;
}

type Obj = Readonly<Record<string, unknown>>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});

const withoutReference = (binding: Obj): Obj => ({ ...binding, providerReference: null });

function generationAt(lineageEvents: readonly ChainEvent[], seq: number): number | null {
  let g: number | null = null;
  for (const e of lineageEvents) {
    if (e.seq < seq && e.type === 'generation_advanced') g = Number(obj(e.body)['generation']);
  }
  return g;
}

/**
 * C5 holds when the last `mission_checked` before entry (entry commits it in the same transaction
 * as `provider_entered`, A3.6) answered `continue` for the gated Mission. No entry at all is C1's
 * failure; without a check before it, or with a check of another Mission, C5 fails too.
 */
function missionChecked(
  gate: { readonly origin: string; readonly id: string },
  events: readonly ChainEvent[],
  entered: ChainEvent | undefined,
): boolean {
  if (entered === undefined) return false;
  const check = events.filter((e) => e.type === 'mission_checked' && e.seq < entered.seq).at(-1);
  if (check === undefined) return false;
  const body = obj(check.body);
  const mission = obj(body['mission']);
  return body['decision'] === 'continue' && mission['origin'] === gate.origin && mission['id'] === gate.id;
}

export function failedCriteria(a: ActionEvidence): FicCriterion[] {
  const failed: FicCriterion[] = [];
  const createdEvent = a.events.find((e) => e.type === 'occurrence_created');
  const enteredEvent = a.events.find((e) => e.type === 'provider_entered');
  const created = obj(createdEvent?.body);
  const entered = obj(enteredEvent?.body);
  if (!a.chainVerifies || !a.rowAgreesWithLog || createdEvent === undefined || enteredEvent === undefined)
    failed.push('C1');
  const generation = entered['generation'];
  const atSeq = enteredEvent === undefined ? null : generationAt(a.lineageEvents, enteredEvent.seq);
  if (generation === undefined || generation !== created['capturedGeneration'] || generation !== atSeq)
    failed.push('C2');
  const advanced = a.lineageEvents.some(
    (e) => e.type === 'generation_advanced' && obj(e.body)['generation'] === generation,
  );
  if (!a.lineageChainVerifies || !advanced) failed.push('C3');
  const bound = obj(created['provider']);
  const bindingOk =
    enteredEvent !== undefined &&
    entered['requestDigest'] === bound['requestDigest'] &&
    entered['nativeKey'] === bound['nativeKey'] &&
    (a.storedBinding === null ||
      digestJcs(withoutReference(a.storedBinding)) === digestJcs(withoutReference(bound)));
  if (!bindingOk) failed.push('C4');
  if (a.missionGate !== null && !missionChecked(a.missionGate, a.events, enteredEvent)) failed.push('C5');
  return failed;
}
