/**
 * Client authentication at the reference issuer (MST-02, C-A13): `private_key_jwt` (RFC 7523) only.
 * The assertion is verified against the client's registered JWKS: `iss` = `sub` = client_id, `aud`
 * = the issuer or the endpoint URL, `exp` within 5 minutes, `jti` usable once. A request carrying
 * HTTP Basic or a `client_secret` is refused outright (the draft: "MUST NOT be used").
 */
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { decodeJwt, jwtVerify, type JWK } from 'jose';
import type { Form } from './form.js';

export const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** An assertion's `exp` at most this far after now (plus `SKEW_MS`): the 5 minutes above. */
const MAX_ASSERTION_LIFETIME_MS = 300_000;
const SKEW_MS = 30_000;

export interface RegisteredClient {
  readonly clientId: string;
  readonly jwks: readonly JWK[];
  /** An administrator at the lifecycle endpoint: every operation on every Mission (status draft). */
  readonly administrator?: boolean;
}

export class ClientRegistry {
  readonly #clients = new Map<string, RegisteredClient>();
  readonly #usedJti = new Map<string, number>();

  register(client: RegisteredClient): void {
    this.#clients.set(client.clientId, client);
  }

  has(clientId: string): boolean {
    return this.#clients.has(clientId);
  }

  isAdministrator(clientId: string): boolean {
    return this.#clients.get(clientId)?.administrator === true;
  }

  /** The authenticated client_id, or undefined (the caller answers 401). */
  async authenticate(
    form: Form,
    authorization: string | undefined,
    audiences: readonly string[],
    nowMs: number,
  ): Promise<string | undefined> {
    if (authorization !== undefined && /^basic /i.test(authorization)) return undefined;
    if (form.has('client_secret')) return undefined;
    if (form.get('client_assertion_type') !== JWT_BEARER) return undefined;
    const assertion = form.get('client_assertion');
    if (assertion === undefined) return undefined;
    let clientId: unknown;
    try {
      clientId = decodeJwt(assertion).iss;
    } catch {
      return undefined;
    }
    const client = typeof clientId === 'string' ? this.#clients.get(clientId) : undefined;
    if (client === undefined) return undefined;
    return (await this.#verify(client, assertion, audiences, nowMs)) ? client.clientId : undefined;
  }

  async #verify(
    client: RegisteredClient,
    assertion: string,
    audiences: readonly string[],
    nowMs: number,
  ): Promise<boolean> {
    for (const jwk of client.jwks) {
      try {
        const key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
        const { payload } = await jwtVerify(assertion, key, {
          algorithms: ['ES256', 'EdDSA'],
          issuer: client.clientId,
          subject: client.clientId,
          audience: [...audiences],
          currentDate: new Date(nowMs),
          clockTolerance: SKEW_MS / 1000,
          maxTokenAge: MAX_ASSERTION_LIFETIME_MS / 1000,
          requiredClaims: ['exp', 'iat', 'jti'],
        });
        // `maxTokenAge` bounds only `iat`: an assertion whose `exp` is a year ahead would be
        // accepted and its jti held in memory until then. `exp` too must be within 5 minutes (plus
        // the 30 s skew) of now (RFC 7523 §3 lets the server bound it), else unauthenticated (401).
        if ((payload.exp as number) * 1000 > nowMs + MAX_ASSERTION_LIFETIME_MS + SKEW_MS) return false;
        return this.#spend(`${client.clientId} ${String(payload.jti)}`, (payload.exp ?? 0) * 1000, nowMs);
      } catch {
        // Try the client's next key; none verifying means unauthenticated.
      }
    }
    return false;
  }

  #spend(key: string, untilMs: number, nowMs: number): boolean {
    for (const [jti, until] of this.#usedJti) if (until + 30_000 < nowMs) this.#usedJti.delete(jti);
    if (this.#usedJti.has(key)) return false;
    this.#usedJti.set(key, untilMs);
    return true;
  }
}
