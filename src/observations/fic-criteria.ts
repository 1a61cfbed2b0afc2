/**
 * C-B7: which of C1–C5 one entered occurrence fails, from facts the store read out of the evidence
 * log (never from the occurrence table alone, which is what a tamperer would edit).
 * C1 its chain verifies; C2 the entering generation = captured = the lineage's generation at that
 * seq; C3 the lineage chain verifies and holds the matching `generation_advanced`; C4 the provider
 * binding recomputes from `occurrence_created` (request digest and native key entered are the
 * ones bound, and the stored binding has the created digest); C5 a Mission-bound occurrence has
 * a `mission_checked` answer `continue` before its entry.
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
  readonly events: readonly ChainEvent[];
  readonly lineageChainVerifies: boolean;
  readonly lineageEvents: readonly ChainEvent[];
  /** The provider binding as the occurrence row holds it now, if the row exists. */
  readonly storedBinding: Readonly<Record<string, unknown>> | null;
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

function missionBound(created: Obj, events: readonly ChainEvent[]): boolean {
  const linked = Array.isArray(created['linkedIds']) ? (created['linkedIds'] as unknown[]) : [];
  return (
    linked.some((l) => String(obj(l)['type']).startsWith('mission')) ||
    events.some((e) => e.type === 'mission_bound')
  );
}

export function failedCriteria(a: ActionEvidence): FicCriterion[] {
  const failed: FicCriterion[] = [];
  const createdEvent = a.events.find((e) => e.type === 'occurrence_created');
  const enteredEvent = a.events.find((e) => e.type === 'provider_entered');
  const created = obj(createdEvent?.body);
  const entered = obj(enteredEvent?.body);
  if (!a.chainVerifies || createdEvent === undefined || enteredEvent === undefined) failed.push('C1');
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
  if (missionBound(created, a.events)) {
    const check = a.events.find(
      (e) => e.type === 'mission_checked' && (enteredEvent === undefined || e.seq < enteredEvent.seq),
    );
    if (check === undefined || obj(check.body)['decision'] !== 'continue') failed.push('C5');
  }
  return failed;
}
