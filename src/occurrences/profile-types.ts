/**
 * The provider profile document (AOC "Provider Profile Contract", AOC-REQ-003, AOC-REQ-009,
 * DESIGN.md §4): a pinned, versioned JSON document whose JCS digest is part of every binding.
 */
import type { Sha256Digest } from '../core/digest.js';
import type { Interpretation } from './model.js';

export const PROFILE_FORMAT = 'baton.provider-profile/1';

export const STATUS_SOURCE_KINDS = ['lookup_by_key', 'lookup_by_reference', 'listing', 'webhook'] as const;
export type StatusSourceKind = (typeof STATUS_SOURCE_KINDS)[number];

/**
 * What a source guarantees about absence: `exact` (a lookup answers for the one key), `paged_to_end`
 * (a listing is complete only when every page was read), `best_effort` (absence proves nothing).
 */
export const COMPLETENESS = ['exact', 'paged_to_end', 'best_effort'] as const;
export type Completeness = (typeof COMPLETENESS)[number];

export const PAGINATION = ['none', 'cursor', 'page_number'] as const;
export type Pagination = (typeof PAGINATION)[number];

/** How an answer from a source is authenticated: the pin the trusted status-source layer checks. */
export type AuthenticationPin =
  | { readonly kind: 'hmac-sha256'; readonly secretId: string }
  | { readonly kind: 'ed25519'; readonly kid: string; readonly publicKey: string }
  | { readonly kind: 'jwks'; readonly url: string; readonly kids: readonly string[] };

export interface StatusSource {
  readonly id: string;
  readonly kind: StatusSourceKind;
  readonly url: string;
  readonly authentication: AuthenticationPin;
  /** How long the provider keeps status for an operation; absence beyond it is not evidence. */
  readonly retentionSeconds: number;
  /** The maximum age of an answer that may move the state. */
  readonly freshnessSeconds: number;
  readonly completeness: Completeness;
  readonly pagination: Pagination;
}

export type NativeKeyRule =
  | { readonly rule: 'template'; readonly template: string; readonly header: string }
  | {
      readonly rule: 'sha256-jcs';
      readonly members: readonly NativeKeyMember[];
      readonly prefix: string;
      readonly header: string;
    }
  | { readonly rule: 'none' };

export const NATIVE_KEY_MEMBERS = ['domain', 'profileId', 'account', 'environment', 'occurrenceId'] as const;
export type NativeKeyMember = (typeof NATIVE_KEY_MEMBERS)[number];

export interface StatusMapping {
  readonly interpretation: Interpretation;
  /** For a terminal interpretation: whether this status establishes that no protected effect occurred. */
  readonly establishesNoEffect: boolean;
}

/**
 * Where the request carries the authority it spends (src/occurrences/authority-tie.ts): the
 * amount member and the unit (fixed, or read from a member through a map of its values), or a
 * fixed amount per occurrence for requests that carry none.
 */
export type AuthorityTie =
  | {
      readonly amount: string;
      readonly unit: string | { readonly member: string; readonly values: Readonly<Record<string, string>> };
    }
  | { readonly perOccurrence: number };

export interface ProviderProfile {
  readonly format: typeof PROFILE_FORMAT;
  readonly id: string;
  readonly version: string;
  readonly provider: { readonly name: string; readonly apiVersion: string };
  readonly account: string;
  readonly environment: string;
  /** The request representation: which members exist and are digested; private ⇒ evidence keeps digests only. */
  readonly request: {
    readonly members: readonly string[];
    readonly required: readonly string[];
    readonly private: boolean;
  };
  readonly nativeKey: NativeKeyRule;
  /** How the provider reference is read from a provider answer. */
  readonly reference: { readonly member: string; readonly pattern: string };
  /** The synchronous answer to the entry call, and how it is authenticated. */
  readonly acknowledgement: { readonly authentication: AuthenticationPin; readonly freshnessSeconds: number };
  readonly statusSources: readonly StatusSource[];
  readonly statuses: Readonly<Record<string, StatusMapping>>;
  /** Absent: the profile ties no authority to its requests, and create refuses (fail closed). */
  readonly authority?: AuthorityTie;
}

export interface RegisteredProfile {
  readonly id: string;
  readonly version: string;
  readonly digest: Sha256Digest;
  readonly document: ProviderProfile;
  readonly registeredAt: number;
}
