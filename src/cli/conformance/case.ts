/** A conformance case: its id, what it evaluates, its declared inputs and its procedure. */
import type { JsonObject } from '../../core/json.js';
import type { Kit } from './kit.js';

export interface CaseDefinition<K extends Kit = Kit> {
  readonly id: string;
  readonly title: string;
  /** The requirement ids this case evaluates (AOC-REQ-0xx, HAR-nn, MST-nn, MSG-nn, MCO-nn). */
  readonly requirements: readonly string[];
  /** The declared inputs — invoices, faults, steps; their JCS digest is the case's input digest. */
  readonly inputs: JsonObject;
  /** Act on the real service and sandbox, recording checks computed from observed facts. */
  run(kit: K): Promise<void>;
}
