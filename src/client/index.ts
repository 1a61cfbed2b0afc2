// The public surface of src/client: the SDK workers use (DESIGN.md §8, docs/client.md).
export { callAdapter, type ProviderAdapter, type ProviderCall } from './adapter.js';
export {
  AdminClient,
  type AdminClientOptions,
  type CreatedPrincipalToken,
  type ListOptions,
  type MissionCheckAnswer,
  type MissionIssuerSummary,
  type PinnedProducerSummary,
  type PrincipalToken,
  type ProducerKeyInput,
  type PrincipalTokenRole,
} from './admin.js';
export { HttpBatonClient, type HttpBatonClientOptions } from './http.js';
export type { Fetch } from './http-transport.js';
// Type-only, as baton-aoc/client has it: executor.reconcile's answer.
export type { OccurrenceReconciled } from '../providers/index.js';
// executor.harness's calls, and the same calls for a worker that holds only a credential.
export * from './harness.js';
export { InProcessBatonClient, type InProcessBatonClientOptions } from './in-process.js';
export { perform } from './perform.js';
export * from './types.js';
export {
  OccurrencesQuery,
  type ChainCheck,
  type LineageHistory,
  type OccurrenceListFilter,
  type OccurrencesQueryOptions,
  type OccurrenceTimeline,
} from './occurrences-query.js';
