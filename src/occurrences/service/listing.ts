/**
 * `GET /v1/occurrences` and `baton occurrences list` (docs/api.md, "Listing occurrences"): one
 * page of occurrences, newest first, under optional filters, with an opaque cursor. The cursor holds
 * the last row's (createdAt, id), authenticated by the service's codec (src/core/cursor.ts): it
 * names a position in a stable order, never an offset, so rows created while a client pages never
 * shift or repeat what it sees. A cursor the codec did not issue is refused (input_invalid), never
 * read as "start over" or as the last page. The cursor is bound to every filter of the query it
 * was issued for (`listScope`), so a cursor of one query used with another is refused too: read as
 * a position, it answers rows of neither query — for a creation key, an empty page for a key that
 * exists, which an operator would read as "no occurrence" and create (and pay) again (AOC-REQ-006).
 * `limit` is not bound: a client may change its page size between pages.
 */
import { listScope, type CursorCodec, type CursorFilters } from '../../core/cursor.js';
import type { OccurrenceQuery } from '../ports.js';
import { OUTCOMES, PHASES } from '../model.js';
import { NAME, Reader } from '../validate.js';
import type { OccurrenceView, ServiceContext } from './context.js';
import { view } from './context.js';

const r: Reader = new Reader('input_invalid');
export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 500;
/** The scope of the list's cursors under the query's filters (src/core/cursor.ts). */
const scopeOf = (filters: CursorFilters): string => listScope('occurrences', filters);

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

function decodeCursor(
  cursors: CursorCodec,
  filters: CursorFilters,
  cursor: unknown,
): { createdAt: number; id: string } {
  return cursors.read(scopeOf(filters), cursor, { path: '$.cursor' }, ([createdAt, id, ...rest]) =>
    rest.length === 0 && Number.isSafeInteger(createdAt) && typeof id === 'string' && NAME.test(id)
      ? { createdAt: createdAt as number, id }
      : undefined,
  );
}

function optionalTime(value: unknown, path: string): number | undefined {
  return value === undefined ? undefined : r.integer(value, path, 0);
}

/** The store query of a list input, and its filters (what the page's cursor is bound to). */
export function readListInput(
  input: unknown,
  cursors: CursorCodec,
): { query: OccurrenceQuery; filters: CursorFilters } {
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
  const filters = {
    phase,
    outcome,
    lineage: name('lineage'),
    profileId: name('profileId'),
    creationKey: name('creationKey'),
    createdFrom,
    createdBefore,
  };
  const after = f['cursor'] === undefined ? undefined : decodeCursor(cursors, filters, f['cursor']);
  const limit = f['limit'] === undefined ? DEFAULT_PAGE : r.integer(f['limit'], '$.limit', 1, MAX_PAGE);
  const q: Record<string, unknown> = { ...filters, after };
  for (const k of Object.keys(q)) if (q[k] === undefined) delete q[k];
  return { query: { ...(q as Omit<OccurrenceQuery, 'limit'>), limit }, filters };
}

export async function listOccurrences(ctx: ServiceContext, input: unknown): Promise<OccurrencePage> {
  const { query, filters } = readListInput(input, ctx.cursors);
  // One row more than the page says whether another page exists, without a COUNT.
  const rows = await ctx.uow.read((repo) => repo.pageOccurrences({ ...query, limit: query.limit + 1 }));
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  const nextCursor =
    rows.length > query.limit && last !== undefined
      ? ctx.cursors.issue(scopeOf(filters), [last.createdAt, last.id])
      : null;
  return { occurrences: page.map(view), nextCursor };
}
