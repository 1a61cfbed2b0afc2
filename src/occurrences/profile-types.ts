/**
 * The provider profile document (AOC "Provider Profile Contract", AOC-REQ-003, AOC-REQ-009,
 * DESIGN.md §4): a pinned, versioned JSON document whose JCS digest is part of every binding.
 */
import type { Sha256Digest } from '../core/digest.js';
import type { Interpretation } from './model.js';

export const PROFILE_FORMAT = 'baton.provider-profile/1';
/**
 * Format 2 (issue 13 §1) describes a real provider declaratively: the entry call, where each
 * answer carries status, reference, key, amount and account (RFC 6901 pointers), not-found
 * answers, listings, the credential a call sends, and the pins of real providers' schemes
 * (`channel`, `stripe-signature`, `standard-webhooks`). Format 1 stays accepted as it was.
 */
export const PROFILE_FORMAT_V2 = 'baton.provider-profile/2';
export const PROFILE_FORMATS = [PROFILE_FORMAT, PROFILE_FORMAT_V2] as const;
export type ProfileFormat = (typeof PROFILE_FORMATS)[number];

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

/**
 * How an answer from a source is authenticated: the pin the trusted status-source layer checks.
 * Format 1 knows the first three. Format 2 adds:
 * - `channel`: the answer is trusted only because Baton fetched it itself from `origin` (https, or
 *   http on loopback) sending the credential `credential` — it proves who answered (the origin's
 *   TLS identity) and that the request was the credential holder's; it proves nothing about an
 *   answer anyone else relays (docs/providers.md "Authenticated status source");
 * - `stripe-signature` / `standard-webhooks`: webhook schemes over the raw body
 *   (src/providers/webhook-schemes), with the timestamp tolerance.
 */
export type AuthenticationPin =
  | { readonly kind: 'hmac-sha256'; readonly secretId: string }
  | { readonly kind: 'ed25519'; readonly kid: string; readonly publicKey: string }
  | { readonly kind: 'jwks'; readonly url: string; readonly kids: readonly string[] }
  | { readonly kind: 'channel'; readonly origin: string; readonly credential: string }
  | { readonly kind: 'stripe-signature'; readonly secretId: string; readonly toleranceSeconds: number }
  | {
      readonly kind: 'standard-webhooks';
      readonly version: 'v1';
      readonly secretId: string;
      readonly toleranceSeconds: number;
    }
  | {
      readonly kind: 'standard-webhooks';
      readonly version: 'v1a';
      readonly kid: string;
      /** `whpk_` + standard base64 of the raw 32-byte Ed25519 public key. */
      readonly publicKey: string;
      readonly toleranceSeconds: number;
    };

export const PIN_KINDS_V1 = ['hmac-sha256', 'ed25519', 'jwks'] as const;
export const PIN_KINDS_V2 = [...PIN_KINDS_V1, 'channel', 'stripe-signature', 'standard-webhooks'] as const;

/** Which credential a call sends, by id (resolved at start, credentials.ts), and how. */
export interface CredentialUse {
  readonly id: string;
  /** `bearer`: `Authorization: Bearer <value>`; `basic`: the value as the Basic user name. */
  readonly scheme: 'bearer' | 'basic';
}

/**
 * Where an answer (or a listing item, or a webhook event) carries what the judge needs, as
 * RFC 6901 pointers. `expect` guards the object's type (`/object` = `payment_intent`), so a
 * refund can never be read as a payment. `account.whenAbsent: pinned` says an answer that names
 * no account is about the account whose credential or secret authenticated it.
 */
/** What a read rule's native-key pointer names (AnswerRead.nativeKeyOf). */
export const NATIVE_KEY_MEANINGS = ['causing_request'] as const;
export type NativeKeyMeaning = (typeof NATIVE_KEY_MEANINGS)[number];

export interface AnswerRead {
  readonly expect?: readonly { readonly pointer: string; readonly equals: string | boolean }[];
  readonly status: string;
  readonly reference: string;
  readonly nativeKey?: string;
  /**
   * What the `nativeKey` pointer names (docs/providers.md "Read rules"). Absent: a property of the
   * object itself, judged strictly — a carried key that is not the binding's refuses the answer.
   * `causing_request`: the key of the request that CAUSED the event (Stripe's
   * `/request/idempotency_key`), so only a key equal to the binding's anchors; any other key (or
   * none) is another request's and says nothing about this occurrence, which the item then
   * anchors to only by the bound provider reference (AOC-REQ-007, AOC-CASE-009).
   */
  readonly nativeKeyOf?: NativeKeyMeaning;
  readonly amount?: string;
  readonly unit?: string;
  readonly account: { readonly pointer?: string; readonly whenAbsent: 'pinned' | 'missing' };
  readonly observedAt?: { readonly pointer: string; readonly format: 'unix-seconds' | 'rfc3339' };
  /** Webhooks: the provider's event id (replay is refused on it). */
  readonly eventId?: string;
}

/** The answer that means "no such object" (Stripe: 404 with `/error/code` = `resource_missing`). */
export interface NotFoundRule {
  readonly httpStatus: number;
  readonly pointer: string;
  readonly equals: string;
}

/** A paged listing: the items, the has-more flag, and the cursor (an item member) sent back. */
export interface ListingRule {
  readonly items: string;
  readonly hasMore: string;
  readonly cursor: string;
  readonly cursorParam: string;
  readonly limitParam: string;
}

/** Format 2: the entry call Baton's HTTP adapter makes (a user's own client may make it instead). */
export interface EntryRule {
  readonly method: 'POST';
  /** A URL template; `{account}` may appear. */
  readonly url: string;
  readonly encoding: 'json' | 'form';
  readonly credential?: CredentialUse;
}

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
  /** Format 2 only. */
  readonly method?: 'GET';
  readonly credential?: CredentialUse;
  readonly read?: AnswerRead;
  readonly notFound?: NotFoundRule;
  readonly listing?: ListingRule;
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
  readonly format: ProfileFormat;
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
  /**
   * How the provider reference is read from a provider answer: format 1 names a top-level member;
   * format 2 gives only its pattern (each `read` rule points at it).
   */
  readonly reference: { readonly member?: string; readonly pattern: string };
  /** The synchronous answer to the entry call, and how it is authenticated. */
  readonly acknowledgement: {
    readonly authentication: AuthenticationPin;
    readonly freshnessSeconds: number;
    readonly read?: AnswerRead;
  };
  /** Format 2: the entry call. */
  readonly entry?: EntryRule;
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
