// The public surface of src/occurrences (AOC). Other contexts import only from here.
export * from './model.js';
export * from './profile-types.js';
export {
  deriveNativeKey,
  findStatusSource,
  mapStatus,
  nativeKeyHeader,
  assertProfileMatches,
  profileDigest,
  readProviderReference,
  referenceMatches,
  requestDigest,
  validateProfile,
  type ReferenceReading,
} from './profile.js';
export { pinIdentities } from './profile-parts.js';
export * from './machine.js';
export type * from './inputs.js';
export { readAuthorityInput, readDomainConfig } from './inputs.js';
export { NAME, Reader } from './validate.js';
export type { AcknowledgementInput, ObservationInput } from './inputs-observe.js';
export type * from './ports.js';
export { OccurrencesService, type OccurrencesServiceOptions } from './service.js';
export type { DomainPublicKey, OccurrenceView } from './service/context.js';
export type { CreateResult } from './service/create.js';
export type { CreateAndEnterInput, CreateAndEnterResult } from './service/create-enter.js';
export type { EntryTicket } from './service/entry.js';
export type { ListInput, OccurrencePage } from './service/listing.js';
export type { AcknowledgedObserved, ObserveResult } from './service/observe.js';
export type {
  EventObservation,
  OccurrenceLocator,
  ProviderEventInput,
  ProviderEventResult,
  RefusedDeliveryInput,
  RefusedDeliveryResult,
} from './service/provider-event.js';
export { REFUSED_EVIDENCE_CAP } from './service/provider-event.js';
export { ACKNOWLEDGEMENT_EVIDENCE_CAP, type NotRecorded } from './service/ack-bound.js';
export type { LineagePage, LineageView, OccurrenceCounts, OccurrenceDetail } from './service/queries.js';
export { deliversOccurrence } from './service/queries.js';
export type { TakeoverResult } from './service/setup.js';
export type { Listed, ProfileSummary } from './service/admin-reads.js';
export { MAX_LIST } from './service/admin-reads.js';
