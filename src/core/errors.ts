/**
 * One error type for all of Baton (DESIGN.md §9). The `code` is a stable string from the table
 * below; the HTTP status and the `retryable` flag derive from it, never from the message.
 * Messages never carry tokens, keys or request bodies.
 */

interface CodeSpec {
  readonly status: number;
  readonly retryable: boolean;
}

const spec = (status: number, retryable = false): CodeSpec => ({ status, retryable });

export const ERROR_CODES = {
  // --- core: input -----------------------------------------------------------------------------
  json_malformed: spec(400),
  json_duplicate_member: spec(400),
  json_invalid_encoding: spec(400),
  json_lone_surrogate: spec(400),
  json_too_deep: spec(400),
  json_too_large: spec(413),
  json_number_out_of_range: spec(400),
  jcs_unsupported_value: spec(400),
  input_invalid: spec(400),
  time_invalid: spec(400),
  digest_malformed: spec(400),
  digest_unsupported_algorithm: spec(400),
  // --- core: keys, signatures, JOSE ------------------------------------------------------------
  key_invalid: spec(400),
  key_unsupported: spec(400),
  kid_mismatch: spec(401),
  signature_malformed: spec(401),
  signature_invalid: spec(401),
  jose_algorithm_not_allowed: spec(401),
  jose_invalid: spec(401),
  jose_expired: spec(401),
  jose_claim_invalid: spec(401),
  evidence_envelope_invalid: spec(400),
  // --- generic ---------------------------------------------------------------------------------
  not_found: spec(404),
  conflict: spec(409),
  unauthenticated: spec(401),
  forbidden: spec(403),
  // console sessions (docs/console.md): a state-changing call without the session's CSRF token
  csrf_invalid: spec(403),
  unavailable: spec(503, true),
  store_busy: spec(503, true),
  store_corrupt: spec(500),
  store_schema_newer: spec(500),
  store_schema_mismatch: spec(500),
  internal: spec(500),
  usage: spec(400),
  // --- occurrences (AOC) -----------------------------------------------------------------------
  domain_not_found: spec(404),
  lineage_not_found: spec(404),
  occurrence_not_found: spec(404),
  authority_not_found: spec(404),
  profile_not_found: spec(404),
  profile_invalid: spec(400),
  generation_retired: spec(409),
  generation_mismatch: spec(409),
  creation_binding_conflict: spec(409),
  provider_binding_conflict: spec(409),
  already_entered: spec(409),
  not_reserved: spec(409),
  entry_deadline_passed: spec(409),
  authority_insufficient: spec(409),
  limit_pending_exceeded: spec(429),
  limit_in_flight_exceeded: spec(429),
  release_not_owner: spec(403),
  observation_invalid: spec(400),
  remedy_invalid: spec(400),
  reissue_invalid: spec(409),
  linked_identifier_conflict: spec(409),
  profile_conflict: spec(409),
  domain_conflict: spec(409),
  authority_conflict: spec(409),
  /** The provider request's amount or unit is not the authority the occurrence spends (docs/occurrences.md). */
  authority_request_mismatch: spec(400),
  // --- providers -------------------------------------------------------------------------------
  provider_unreachable: spec(502, true),
  provider_response_invalid: spec(502),
  status_source_invalid: spec(502),
  /** A credentials document (`baton.credentials/1`) breaks its rules (docs/providers.md "Credentials"). */
  credentials_invalid: spec(400),
  /** A credential reference names an environment variable or file that is not there (a start error). */
  credential_unresolved: spec(500),
  /**
   * A credential this process holds would go to an origin its credentials entry does not list:
   * nothing is sent (docs/providers.md "Credentials"; an HttpProviderAdapter refuses such a profile).
   */
  credential_origin_refused: spec(400),
  /** A webhook delivery's signature is absent, malformed or wrong for the profile's pin (details.reason). */
  webhook_unauthenticated: spec(401),
  /**
   * An authentic webhook delivery signed outside the replay window, or whose event is dated ahead of
   * the server by more than it accepts (details.reason `future_dated`): its event id is not spent.
   */
  webhook_stale: spec(401),
  /** An authenticated delivery that is not an event Baton can read (no event id, not JSON). */
  webhook_event_invalid: spec(400),
  /** The profile has no registered version with a webhook status source. */
  webhook_source_missing: spec(404),
  /** A webhook delivery's body is over the receiver's limit (1 MiB): not read, nothing recorded. */
  webhook_body_too_large: spec(413),
  // --- leases (PTCL): wire codes keep the draft's ERR_ spelling --------------------------------
  ERR_STALE_FENCE_EPOCH: spec(409),
  ERR_PRE_IMAGE_MISMATCH: spec(409),
  ERR_RECOVERY_WINDOW: spec(409),
  ERR_LEASE_EXPIRED: spec(409),
  ERR_CLOCK_SKEW: spec(409),
  ERR_UNKNOWN_RECOVERY_MODE: spec(409),
  ERR_INVERSE_PAYLOAD_MISMATCH: spec(409),
  ERR_LEASE_MALFORMED: spec(400),
  ERR_LEASE_SIGNATURE: spec(401),
  ERR_LEASE_REPLAYED: spec(409),
  ERR_TARGET_MISMATCH: spec(409),
  ERR_ESCROW_LAPSED: spec(409),
  // --- server (HTTP API) ----------------------------------------------------------------------
  media_type_unsupported: spec(415),
  /** The request's framing itself: a path that does not percent-decode, a malformed request line. */
  url_invalid: spec(400),
  http_malformed: spec(400),
  /** The `Host` names no name this server answers (DNS rebinding; src/core/http-host.ts). */
  host_not_allowed: spec(421),
  uri_too_long: spec(414),
  headers_too_large: spec(431),
  request_timeout: spec(408),
  // --- client (SDK) ----------------------------------------------------------------------------
  /** Baton answered, but not with what the route promises: the command may have applied. */
  baton_response_invalid: spec(502),
  /** No answer within the call's `timeoutMs`: like `unavailable`, the command may have applied. */
  client_timeout: spec(504, true),
  /** The caller's AbortSignal cut the call off: unless `details.sent` is false, it may have applied. */
  client_aborted: spec(499),
  // --- config (baton.config.json, `baton apply`) -----------------------------------------------
  /** The config file breaks its schema (schemas/baton.config.schema.json) or a rule beyond it. */
  config_invalid: spec(400),
  /** The config asks for a change the target refuses to make (nothing was applied). */
  config_conflict: spec(409),
  // --- missions / observations -----------------------------------------------------------------
  mission_not_active: spec(403),
  mission_status_unavailable: spec(503, true),
  /**
   * The pinned issuer's client key (`client.key_ref`) cannot be read or used (not a private JWK with
   * kid, of another type than `client.alg`, out of the host's secret scope): a fault of this server's
   * configuration, not of the issuer, so never retried; fixed by fixing the file or variable named.
   */
  mission_client_key_unusable: spec(500),
  /** A Mission Status answer failed a check of A3.2 (details: check, step); never relied on. */
  mission_status_invalid: spec(502),
  /** A lifecycle SET failed a check of A3.4 (details: check, err = the RFC 8935 error code). */
  mission_signal_invalid: spec(400),
  /** A `baton.mission-issuer/1` pin document is malformed or unsafe. */
  mission_issuer_pin_invalid: spec(400),
  /** No issuer is pinned under that identifier (the registry, docs/missions.md). */
  mission_issuer_not_found: spec(404),
  /** The issuer is pinned with another pin or stream bearer: pins are immutable. */
  mission_issuer_conflict: spec(409),
  // harness (build spec A6): the stored half
  mission_binding_missing: spec(409),
  mission_binding_invalid: spec(400),
  stop_matrix_invalid: spec(400),
  work_item_not_found: spec(404),
  /** No such harness session, or another lineage's (an executor is told nothing of those). */
  session_not_found: spec(404),
  work_item_conflict: spec(409),
  work_item_not_dispatchable: spec(409),
  successor_binding_required: spec(409),
  observation_record_invalid: spec(400),
  observation_record_conflict: spec(409),
  observation_profile_unsupported: spec(400),
  observation_record_not_found: spec(404),
  // --- mcp (the gateway) -----------------------------------------------------------------------
  mcp_policy_invalid: spec(400),
  /** An upstream MCP server does not offer what the policy names, or answered unusably. */
  mcp_upstream_invalid: spec(502),
  /** An upstream MCP server cannot be reached now (reconnecting failed); nothing was sent to it. */
  upstream_unavailable: spec(503),
} as const satisfies Record<string, CodeSpec>;

export type BatonErrorCode = keyof typeof ERROR_CODES;

export function isBatonErrorCode(value: string): value is BatonErrorCode {
  return Object.hasOwn(ERROR_CODES, value);
}

export class BatonError extends Error {
  override readonly name = 'BatonError';
  readonly code: BatonErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  /** Structured, non-secret facts a caller may show (a member name, a byte offset, a limit). */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(
    code: BatonErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.retryable = ERROR_CODES[code].retryable;
    this.details = Object.freeze({ ...details });
  }

  toJSON(): { code: BatonErrorCode; message: string; status: number; retryable: boolean } {
    return { code: this.code, message: this.message, status: this.status, retryable: this.retryable };
  }
}

export function isBatonError(value: unknown, code?: BatonErrorCode): value is BatonError {
  return value instanceof BatonError && (code === undefined || value.code === code);
}

/** The stable code of any caught failure: a BatonError's own, `internal` for anything else (a fault). */
export function errorCodeOf(error: unknown): BatonErrorCode {
  return isBatonError(error) ? error.code : 'internal';
}
