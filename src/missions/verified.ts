/**
 * What a verified Mission Status answer or lifecycle SET says, after every check of the build spec's
 * A3.2 (status) or A3.4 (SET) passed. The harness applies only these to a mission view (A3.3); a
 * relayed status JWT from an executor is evidence only and never becomes one of these (C-A29).
 */
export interface VerifiedMissionStatus {
  readonly source: 'status';
  /** `iss`, which equals `mission.origin` (A3.2 step 5, C-A10). */
  readonly origin: string;
  readonly missionId: string;
  /** As received; only the exact string `active` permits anything (MCO-01). */
  readonly state: string;
  readonly authorityHash: string | null;
  /** `mission.expires_at` (RFC 3339): the reliance bound. */
  readonly expiresAt: string;
  readonly missionExpiry: string | null;
  /** `iat`, seconds since the epoch. */
  readonly issuedAt: number;
  /** When Baton verified it (RFC 3339, Baton's clock). */
  readonly checkedAt: string;
  /**
   * A3.2 step 8 before the action-class bound: min(expires_at + 30 s if active else 0, mission_expiry,
   * checkedAt + the pin's max_stale_seconds when the verifier was given it).
   */
  readonly freshUntil: string;
  /** The compact JWS as received, archived so it re-verifies after key rotation. */
  readonly jws: string;
  /** `sha-256:` + base64url of the JWS bytes. */
  readonly jwsDigest: string;
  readonly kid: string;
  /** RFC 7638 thumbprint of the verifying JWK. */
  readonly jwkThumbprint: string;
  /**
   * The digest of the issuer pin it verified under, named by the consuming half that verified it:
   * the applying transaction then refuses it (`mission_issuer_not_found`, nothing written) unless
   * the origin is still pinned with exactly that pin — an answer verified just before an unpin (or
   * before a re-pin with another pin) is never applied after it (docs/missions.md "Unpinning an
   * issuer"). Absent: applied without that check (an input not tied to a stored pin).
   */
  readonly pinDigest?: string;
}

export interface VerifiedMissionSignal {
  readonly source: 'signal';
  readonly origin: string;
  readonly missionId: string;
  readonly state: string;
  readonly priorState: string | null;
  /** Strictly growing per mission; approval is 1 (MSG-02). */
  readonly version: number;
  /** `committed_at` (RFC 3339, the issuer's clock). */
  readonly committedAt: string;
  readonly jti: string;
  readonly issuedAt: number;
  /**
   * `exp`, seconds since the epoch: the SET is accepted until 30 s after it, so its `jti` must stay
   * one-time that long (C-A18) and no longer (the stored replay row is pruned after it).
   */
  readonly expiresAt: number;
  /** `sha-256:` + base64url of the SET's compact bytes (replay comparison, C-A18). */
  readonly digest: string;
  readonly reason: string | null;
  /**
   * The verifying pin's `max_stale_seconds`: an `active` signal is relied on at most this long after
   * its `iat` (or Baton's bound, whichever is shorter; MSG-03, "Missed Events Are Not Fail-Open").
   */
  readonly relianceSeconds?: number;
  /**
   * The digest of the issuer pin it verified under, named by the consuming half that verified it:
   * the applying transaction then refuses it (`mission_issuer_not_found`, nothing written) unless
   * the origin is still pinned with exactly that pin — an answer verified just before an unpin (or
   * before a re-pin with another pin) is never applied after it (docs/missions.md "Unpinning an
   * issuer"). Absent: applied without that check (an input not tied to a stored pin).
   */
  readonly pinDigest?: string;
}

export type VerifiedMissionState = VerifiedMissionStatus | VerifiedMissionSignal;
