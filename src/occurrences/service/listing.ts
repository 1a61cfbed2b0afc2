/**
 * `GET /v1/occurrences` and `baton occurrences list` (docs/api.md, "Listing occurrences"): one
 * page of occurrences, newest first, under optional filters, with an opaque cursor. The cursor is
 * the last row's (createdAt, id) as base64url JSON: it names a position in a stable order, never
 * an offset, so rows created while a client pages never shift or repeat what it sees. A cursor
 * that does not decode is refused (input_invalid), never read as "start over".
 */
import type { OccurrenceQuery } from '../ports.js';
import { OUTCOMES, PHASES } from '../model.js';
import { NAME, Reader } from '../validate.js';
import type { OccurrenceView, ServiceContext } from './context.js';
import { view } from './context.js';

const r: Reader = new Reader('input_invalid');
export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 500;
const CURSOR = /^[A-Za-z0-9_-]{1,400}$/;

export interface ListInput {
  readonly phase?: string;
  readonly outcome?: string;
  readonly lineage?: string;
  readonly profileId?: string;
  readonly creationKey?: string;
  /** Unix ms, inclusive. */
  readonly createdFrom?: number;
  /** Unix ms, exclusive. */
  readonly createdBefore?: number;
  readonly cursor?: string;
  readonly limit?: number;
}

export interface OccurrencePage {
  readonly occurrences: readonly OccurrenceView[];
  /** Pass it back as `cursor` for the next page; null when this page is the last. */
  readonly nextCursor: string | null;
}

export function encodeCursor(createdAt: number, id: string): string {
  return Buffer.from(JSON.stringify([createdAt, id]), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): { createdAt: number; id: string } {
  const text = r.string(cursor, '$.cursor', CURSOR, 400);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    r.fail('$.cursor', 'is not a cursor this server issued');
  }
  const ok =
    Array.isArray(parsed) &&
    parsed.length === 2 &&
    Number.isSafeInteger(parsed[0]) &&
    typeof parsed[1] === 'string' &&
    NAME.test(parsed[1]);
  if (!ok) r.fail('$.cursor', 'is not a cursor this server issued');
  const [createdAt, id] = parsed as [number, string];
  return { createdAt, id };
}

function optionalTime(value: unknown, path: string): number | undefined {
  return value === undefined ? undefined : r.integer(value, path, 0);
}

export function readListInput(input: unknown): OccurrenceQuery {
  const f = r.object(
    input ?? {},
    '$',
    [],
    [
      'phase',
      'outcome',
      'lineage',
      'profileId',
      'creationKey',
      'createdFrom',
      'createdBefore',
      'cursor',
      'limit',
    ],
  );
  const name = (k: string): string | undefined => r.optionalString(f[k], `$.${k}`, NAME, 128);
  const phase = f['phase'] === undefined ? undefined : r.oneOf(f['phase'], '$.phase', PHASES);
  const outcome = f['outcome'] === undefined ? undefined : r.oneOf(f['outcome'], '$.outcome', OUTCOMES);
  const createdFrom = optionalTime(f['createdFrom'], '$.createdFrom');
  const createdBefore = optionalTime(f['createdBefore'], '$.createdBefore');
  const after = f['cursor'] === undefined ? undefined : decodeCursor(f['cursor'] as string);
  const limit = f['limit'] === undefined ? DEFAULT_PAGE : r.integer(f['limit'], '$.limit', 1, MAX_PAGE);
  const q: Record<string, unknown> = {
    phase,
    outcome,
    lineage: name('lineage'),
    profileId: name('profileId'),
    creationKey: name('creationKey'),
    createdFrom,
    createdBefore,
    after,
  };
  for (const k of Object.keys(q)) if (q[k] === undefined) delete q[k];
  return { ...(q as Omit<OccurrenceQuery, 'limit'>), limit };
}

export async function listOccurrences(ctx: ServiceContext, input: unknown): Promise<OccurrencePage> {
  const query = readListInput(input);
  // One row more than the page says whether another page exists, without a COUNT.
  const rows = await ctx.uow.read((repo) => repo.pageOccurrences({ ...query, limit: query.limit + 1 }));
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  const nextCursor =
    rows.length > query.limit && last !== undefined ? encodeCursor(last.createdAt, last.id) : null;
  return { occurrences: page.map(view), nextCursor };
}
