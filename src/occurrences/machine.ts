/**
 * The pure transitions of the occurrences context (DESIGN.md §1, §3):
 * `(state, command, now) → { state, events } | Rejection`. No I/O, no clock, no randomness: ids,
 * secrets' digests and time come in as arguments. One file per command under machine/.
 */
export {
  isRejection,
  occurrenceIdOf,
  occurrenceSubject,
  reject,
  type Caller,
  type Rejection,
} from './machine/common.js';
export {
  decideTakeover,
  type TakeoverCommand,
  type TakeoverDecision,
  type TakeoverState,
} from './machine/takeover.js';
export {
  creationDigest,
  decideCreate,
  type CreateCommand,
  type CreateDecision,
  type CreateState,
} from './machine/create.js';
export { decideEnter, type EnterDecision, type EnterState } from './machine/enter.js';
export {
  decideRelease,
  decideStopRelease,
  type ReleaseDecision,
  type ReleaseState,
} from './machine/release.js';
export { decideObserve, type ObserveDecision } from './machine/observe.js';
export {
  ACKNOWLEDGEMENT_SOURCE,
  assessObservation,
  MAX_ALSO_MATCHED,
  OBSERVATION_RESULTS,
  type Assessment,
  type CarriedBinding,
  type ObservationCommand,
  type ObservationResult,
} from './machine/assess.js';
export { checkExpectedBinding, EXPECTED_BINDING_FIELDS, type ExpectedBinding } from './machine/binding.js';
export { checkInFlight, checkLimits, type OpenCounts, type PhaseCounts } from './machine/limits.js';
