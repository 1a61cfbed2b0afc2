/**
 * The cursors of the paged routes (`GET /v1/occurrences`, `/v1/lineages`, `/v1/lineages/{lineage}`,
 * `/v1/evidence`, `/v1/harness/items`, the harness chains, `/v1/authorities`): every one is issued and read by the
 * server's one `CursorCodec` (src/core/cursor.ts), so a cursor Baton did not issue is refused
 * (`input_invalid` naming `$.cursor`), never read as "start over" or as the last page. Each is
 * bound to every filter of the query it was issued for (`listScope`), not to `limit`: a chain's
 * one filter is its subject, so the routes over one chain share its cursors.
 */
import { listScope, MAX_CURSOR_CHARS, type CursorPlace } from '../core/cursor.js';

/** The query-string schema of a cursor (what the codec can produce, bounded). */
export const CURSOR_SCHEMA = { type: 'string', pattern: `^[A-Za-z0-9_-]{1,${MAX_CURSOR_CHARS}}$` } as const;

/** Where a route's cursor comes from: its `cursor` query parameter. */
export const CURSOR_PARAM: CursorPlace = { path: '$.cursor' };

/** The scope of a chain's cursors: the subject, so one chain's cursor is not another's. */
export const chainScope = (subject: string): string => listScope('chain', { subject });
