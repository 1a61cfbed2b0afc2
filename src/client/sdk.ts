/**
 * The package's `./client` entry (`import { HttpBatonClient } from 'baton-aoc/client'`): the HTTP
 * SDK alone. It loads no native module, no Fastify and no database driver at run time (only types
 * come from the domain contexts), so a worker can use it where better-sqlite3 was never built;
 * test/package/install.test.ts installs the packed tarball with --ignore-scripts and checks exactly
 * that. The in-process twin is in the package root, which brings the store with it.
 */
export { callAdapter, type ProviderAdapter, type ProviderCall } from './adapter.js';
export { HttpBatonClient, type HttpBatonClientOptions } from './http.js';
// executor.harness's calls, and the same calls for a worker that holds only a credential.
export * from './harness.js';
export {
  AdminClient,
  type AdminClientOptions,
  type CreatedPrincipalToken,
  type ListOptions,
  type MissionCheckAnswer,
  type MissionIssuerSummary,
  type PinnedProducerSummary,
  type PrincipalToken,
  type PrincipalTokenRole,
  type ProducerKeyInput,
} from './admin.js';
export {
  OccurrencesQuery,
  type ChainCheck,
  type LineageHistory,
  type OccurrenceListFilter,
  type OccurrencesQueryOptions,
  type OccurrenceTimeline,
} from './occurrences-query.js';
export { DEFAULT_TIMEOUT_MS } from './http-transport.js';
export type { Fetch } from './http-transport.js';
export { perform } from './perform.js';
export * from './types.js';
export {
  BatonError,
  ERROR_CODES,
  isBatonError,
  isBatonErrorCode,
  type BatonErrorCode,
} from '../core/errors.js';
// The records the calls answer with, as types only (nothing of the domain is loaded at run time).
export type {
  CreateResult,
  EntryTicket,
  ExpectedBinding,
  MissingKnowledgeReason,
  ObserveResult,
  OccurrenceCounts,
  OccurrenceDetail,
  OccurrenceView,
} from '../occurrences/index.js';
export type { OccurrenceReconciled } from '../providers/index.js';
