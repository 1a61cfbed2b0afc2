/**
 * The reference issuer's strict form parser: `application/x-www-form-urlencoded` only, at most
 * 16 KiB, UTF-8, and a parameter given twice is a 400 `invalid_request` (RFC 6749 §3.1: "Request
 * and response parameters MUST NOT be included more than once"). Empty values count as absent.
 */
import type { FastifyInstance } from 'fastify';

export const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';
export const FORM_LIMIT = 16 * 1024;

export type Form = ReadonlyMap<string, string>;

export class FormError extends Error {
  override readonly name = 'FormError';
}

export function parseForm(raw: Buffer): Form {
  if (raw.length > FORM_LIMIT) throw new FormError('form body too large');
  const text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  const params = new URLSearchParams(text);
  const out = new Map<string, string>();
  for (const [name, value] of params) {
    if (out.has(name)) throw new FormError(`parameter ${name.slice(0, 40)} given more than once`);
    out.set(name, value);
  }
  for (const [name, value] of [...out]) if (value === '') out.delete(name);
  return out;
}

/** Register the parser on `app`: a parse failure becomes the caller's 400 via `request.body === FORM_INVALID`. */
export const FORM_INVALID = Symbol('form-invalid');

export function registerFormParser(app: FastifyInstance): void {
  app.addContentTypeParser(
    FORM_MEDIA_TYPE,
    { parseAs: 'buffer', bodyLimit: FORM_LIMIT },
    (_req, raw: Buffer, done) => {
      try {
        done(null, parseForm(raw));
      } catch {
        done(null, FORM_INVALID);
      }
    },
  );
}

export function formOf(body: unknown): Form | undefined {
  return body instanceof Map ? (body as Form) : undefined;
}
