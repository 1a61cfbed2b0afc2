/**
 * baton.config.json (docs/config.md, schemas/baton.config.schema.json): what `baton apply` and
 * `baton serve --config` create. These are the parsed, checked shapes; `readConfig` produces them.
 */
import type { Ed25519PublicJwk } from '../../core/ed25519.js';
import type { JsonObject } from '../../core/json.js';
import type { AuthorityInput, DomainConfigInput } from '../../occurrences/index.js';

export const CONFIG_FORMAT = 'baton.config/1';

export interface ProfileEntry {
  /** The profile file, resolved against the config file's folder (or absent for an inline document). */
  readonly file?: string;
  readonly document?: JsonObject;
  /** A running `baton sandbox` to pin the profile to (its origin and Ed25519 key). */
  readonly pinToSandbox?: string;
}

export interface TokenEntry {
  readonly name: string;
  readonly role: 'operator' | 'admin';
}

/** A pinned Mission issuer (docs/missions.md): a pin file or inline pin, and its stream's bearer reference. */
export interface IssuerEntry {
  readonly file?: string;
  readonly pin?: JsonObject;
  /** `env:NAME` or `file:PATH`: the RFC 8935 push bearer, read by `baton apply`, stored as a digest. */
  readonly pushBearerRef?: string;
  /** `env:NAME` or `file:PATH`: the RFC 8936 poll bearer, resolved by the server. */
  readonly pollBearerRef?: string;
}

/** A key of a producer entry: read from the file already (a JWK or PEM), or a key file to read. */
export type ProducerKeyEntry = { readonly jwk: Ed25519PublicJwk } | { readonly file: string };

/**
 * A continuity producer whose records must be signed by one of `keys` (docs/config.md "producers",
 * docs/observations.md "Pinned producer keys"); `keys: []` unpins it.
 */
export interface ProducerEntry {
  readonly producer: string;
  readonly keys: readonly ProducerKeyEntry[];
}

export interface BatonConfig {
  readonly domain?: DomainConfigInput;
  readonly profiles: readonly ProfileEntry[];
  readonly authorities: readonly AuthorityInput[];
  readonly tokens: { readonly file?: string; readonly create: readonly TokenEntry[] };
  readonly issuers: readonly IssuerEntry[];
  readonly producers: readonly ProducerEntry[];
}
