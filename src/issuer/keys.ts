/**
 * The reference issuer's signing keys: ES256 by default (C-A27), EdDSA allowed, generated with
 * jose. `rotate` makes a new current key; the previous one stays published until `retire`, which
 * moves it to the archive. Retired keys are never served at `jwks_uri` but are kept by kid for
 * audit (MST-06 "Signing-Key Retention") and listed through the admin interface.
 */
import { KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import { BatonError } from '../core/errors.js';
import type { ForeignSigningKey } from '../core/jose.js';

export type IssuerAlg = 'ES256' | 'EdDSA';

export interface IssuerKey extends ForeignSigningKey {
  readonly publicJwk: JWK;
  readonly thumbprint: string;
}

export async function generateIssuerKey(alg: IssuerAlg, label: string): Promise<IssuerKey> {
  const pair = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' && { crv: 'Ed25519' }) });
  const publicBase = await exportJWK(pair.publicKey);
  const thumbprint = await calculateJwkThumbprint(publicBase, 'sha256');
  const kid = `${label}-${thumbprint.slice(0, 12)}`;
  return {
    privateKey: KeyObject.from(pair.privateKey),
    kid,
    alg,
    thumbprint,
    publicJwk: { ...publicBase, kid, alg, use: 'sig' },
  };
}

export class IssuerKeyRing {
  #current: IssuerKey;
  readonly #published: IssuerKey[];
  readonly #retired: IssuerKey[] = [];
  readonly #alg: IssuerAlg;
  #serial = 1;

  private constructor(first: IssuerKey, alg: IssuerAlg) {
    this.#current = first;
    this.#published = [first];
    this.#alg = alg;
  }

  static async create(alg: IssuerAlg = 'ES256'): Promise<IssuerKeyRing> {
    return new IssuerKeyRing(await generateIssuerKey(alg, 'issuer-key-1'), alg);
  }

  get current(): IssuerKey {
    return this.#current;
  }

  /** The most recently retired key (fault `retired_key` signs with it, A7#7); undefined if none. */
  get lastRetired(): IssuerKey | undefined {
    return this.#retired.at(-1);
  }

  /** The JWKS at `jwks_uri`: published keys only, never a retired one. */
  jwks(): { keys: JWK[] } {
    return { keys: this.#published.map((k) => k.publicJwk) };
  }

  /** The audit archive: every retired public key, by kid. */
  archive(): { keys: JWK[] } {
    return { keys: this.#retired.map((k) => k.publicJwk) };
  }

  byKid(kid: string): IssuerKey | undefined {
    return [...this.#published, ...this.#retired].find((k) => k.kid === kid);
  }

  async rotate(retirePrevious: boolean, alg: IssuerAlg = this.#alg): Promise<IssuerKey> {
    const previous = this.#current;
    this.#serial += 1;
    this.#current = await generateIssuerKey(alg, `issuer-key-${this.#serial}`);
    this.#published.push(this.#current);
    if (retirePrevious) this.retire(previous.kid);
    return this.#current;
  }

  retire(kid: string): void {
    if (kid === this.#current.kid)
      throw new BatonError('conflict', 'the current signing key cannot be retired');
    const at = this.#published.findIndex((k) => k.kid === kid);
    if (at < 0) throw new BatonError('not_found', 'no published key has that kid');
    this.#retired.push(...this.#published.splice(at, 1));
  }
}
