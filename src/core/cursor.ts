/**
 * The paging cursors of every list route (docs/api.md, "Cursors"): a position in the list's order
 * and an HMAC-SHA-256 tag over it, base64url. A cursor Baton did not issue — forged, edited,
 * re-encoded or cut short — fails the tag and is refused (`input_invalid`), so it is never read as
 * a position, and never as "the end of the list" (`nextCursor: null`), which a well-formed
 * position past the end would otherwise be.
 *
 * The tag also covers the cursor's scope: which list, and the whole query the page answered (every
 * filter, as the route applied it: `listScope`; for a chain, its subject), so one list's cursor is
 * not another's, and a cursor issued under one filter is refused under another rather than read as
 * a position in a list it was never a position of (a reused cursor once answered an empty page
 * for a creation key that exists: an operator reading "none" would create, and pay, again). The
 * page size is not bound: a position is a position whatever the size of the page that follows. The key never leaves the server: it is derived (HKDF-SHA-256) from the
 * domain's private key, which every server of one store holds (src/server/open.ts: servers that
 * share a PostgreSQL database share the domain key file), so a cursor one of them issued pages on
 * any other, and no migration or extra secret is needed.
 */
import { createHmac, hkdfSync, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';
import { BatonError } from './errors.js';

/** The longest cursor Baton issues or reads, in base64url characters. */
export const MAX_CURSOR_CHARS = 400;
const TAG_BYTES = 32;
const SALT = Buffer.from('baton/cursor', 'utf8');
const INFO = Buffer.from('baton cursor hmac-sha-256 v1', 'utf8');
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** A list position: the sort key of the last row a page listed. */
export type CursorPosition = readonly (string | number)[];

/**
 * A list's filters as the route applied them: parsed and normalised (a time as epoch ms, a set of
 * states sorted and deduplicated), so two spellings of one query share their cursors. An absent
 * filter is `undefined` (or left out): "no filter", which is not any filter's value.
 */
export type CursorFilters = Readonly<Record<string, string | number | readonly string[] | undefined>>;

/**
 * The scope of `list`'s cursors under `filters`: the list's name and every filter present, in key
 * order. JSON keeps it unambiguous (no value can pass for another filter or another list's name).
 */
export function listScope(list: string, filters: CursorFilters = {}): string {
  const present = Object.keys(filters)
    .sort()
    .flatMap((k) => (filters[k] === undefined ? [] : [[k, filters[k]]]));
  return `${list} ${JSON.stringify(present)}`;
}

/** Where a refused cursor came from, named in the problem (never the cursor itself). */
export interface CursorPlace {
  readonly path: string;
}

export class CursorCodec {
  readonly #key: Buffer;

  private constructor(key: Buffer) {
    this.#key = key;
  }

  /** The codec of every server that holds this domain key (the key stays in the process). */
  static fromDomainKey(privateKey: KeyObject): CursorCodec {
    const material = privateKey.export({ format: 'der', type: 'pkcs8' });
    return new CursorCodec(Buffer.from(hkdfSync('sha256', material, SALT, INFO, 32)));
  }

  /** A codec of a random key: its cursors page on this process only (tests, embedded services). */
  static ephemeral(): CursorCodec {
    return new CursorCodec(randomBytes(32));
  }

  /** The cursor of `position` in the list `scope` names. */
  issue(scope: string, position: CursorPosition): string {
    const payload = Buffer.from(JSON.stringify(position), 'utf8');
    return Buffer.concat([payload, this.#tag(scope, payload)]).toString('base64url');
  }

  /**
   * The position a cursor this codec issued for `scope` holds, when `accept` takes its shape;
   * anything else is `input_invalid` naming `place`.
   */
  read<T>(
    scope: string,
    cursor: unknown,
    place: CursorPlace,
    accept: (position: readonly unknown[]) => T | undefined,
  ): T {
    const payload = this.#verified(scope, cursor);
    const position = payload === undefined ? undefined : parsePosition(payload);
    const out = position === undefined ? undefined : accept(position);
    if (out === undefined) {
      throw new BatonError('input_invalid', `${place.path}: is not a cursor this server issued`, {
        path: place.path,
      });
    }
    return out;
  }

  /** The payload, when the tag is this codec's for `scope` and the text is canonical base64url. */
  #verified(scope: string, cursor: unknown): Buffer | undefined {
    if (typeof cursor !== 'string' || cursor.length > MAX_CURSOR_CHARS || !BASE64URL.test(cursor))
      return undefined;
    const bytes = Buffer.from(cursor, 'base64url');
    // One text per cursor: a re-encoding (other trailing bits) is not the text Baton issued.
    if (bytes.length <= TAG_BYTES || bytes.toString('base64url') !== cursor) return undefined;
    const payload = bytes.subarray(0, bytes.length - TAG_BYTES);
    const tag = bytes.subarray(bytes.length - TAG_BYTES);
    return timingSafeEqual(tag, this.#tag(scope, payload)) ? payload : undefined;
  }

  #tag(scope: string, payload: Buffer): Buffer {
    // The scope as a JSON string is self-delimiting, so (scope, payload) pairs never collide.
    return createHmac('sha256', this.#key).update(JSON.stringify(scope)).update(payload).digest();
  }
}

function parsePosition(payload: Buffer): readonly unknown[] | undefined {
  try {
    const parsed: unknown = JSON.parse(payload.toString('utf8'));
    return Array.isArray(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
