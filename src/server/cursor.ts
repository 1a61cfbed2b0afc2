/**
 * Keyset cursors of the list routes (`GET /v1/lineages`, `GET /v1/harness/items`): the last listed
 * row's key as base64url JSON. A cursor that does not decode to the key the route expects is
 * refused (`input_invalid`), never read as "start over".
 */
import { BatonError } from '../core/errors.js';

/** The query-string schema of a cursor (what `encodeCursor` can produce, bounded). */
export const CURSOR_SCHEMA = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,400}$' } as const;

export const encodeCursor = (key: readonly (string | number)[]): string =>
  Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');

/** The key, when it has exactly the shape `accept` checks; otherwise `input_invalid`. */
export function decodeCursor<T>(cursor: string, accept: (key: readonly unknown[]) => T | undefined): T {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const key = Array.isArray(parsed) ? accept(parsed) : undefined;
  if (key === undefined) {
    throw new BatonError('input_invalid', 'cursor is not a cursor this server issued', { path: '$.cursor' });
  }
  return key;
}
