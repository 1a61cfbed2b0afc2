/**
 * Calls Baton makes itself under a format 2 profile, and what authenticates their answers
 * (docs/providers.md "Authenticated status source"). A `channel` pin trusts an answer only because
 * Baton fetched it from the pinned origin sending the pinned credential: over https the origin's
 * certificate says who answered, and the credential says the question was the account holder's.
 * It does not make the answer transferable (nothing signs it), and it does not prove that the
 * credential belongs to the profile's account — that is the operator's configuration claim. The
 * credential's value goes into one header of one request, attached by `exchange` only for an origin
 * its credentials entry lists (credential-header.ts), and nowhere else.
 */
import type { AuthenticationPin } from '../../occurrences/index.js';
import { pinIdentities } from '../../occurrences/index.js';
import type { KeyResolver } from '../key-resolver.js';
import { authenticate, type Authentication, type SignedMessage } from '../wire.js';

export interface Fetched {
  readonly url: URL;
  /** The credential actually sent (its id), if any. */
  readonly credential: string | undefined;
  readonly message: SignedMessage;
}

/** Authenticate an answer Baton fetched itself: by its channel, or by the provider's signature. */
export function authenticateFetched(
  pin: AuthenticationPin,
  fetched: Fetched,
  keys: KeyResolver,
  nowMs: number,
): Authentication {
  if (pin.kind === 'channel') {
    if (fetched.url.origin !== pin.origin) return { verified: false, detail: 'another_origin' };
    if (fetched.credential !== pin.credential) return { verified: false, detail: 'no_credential' };
    return { verified: true, pin: pinIdentities(pin)[0] ?? '' };
  }
  if (pin.kind === 'hmac-sha256' || pin.kind === 'ed25519' || pin.kind === 'jwks') {
    return authenticate(fetched.message, pin, keys, nowMs);
  }
  // Webhook schemes sign deliveries, not answers (the validator keeps them off fetched sources).
  return { verified: false, detail: 'unsupported_pin' };
}
