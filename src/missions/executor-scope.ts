/**
 * An executor acting on the harness (build spec A6): what its lineage and generation decide, the
 * same whether it calls over HTTP (src/server/routes/harness.ts, its credential authenticated) or
 * in process (src/client/in-process-harness.ts). What it creates belongs to its own lineage
 * (`MissionsService.createSession`/`createItem` take the lineage): the input may name it or none,
 * and naming another is `forbidden` (the input contradicts the credential). Another lineage's
 * items and sessions are `work_item_not_found` / `session_not_found` to it (not "forbidden": it
 * learns nothing of them) — read, acted on, or named as the session, parent item or governed
 * occurrence's work item of something it creates (those checked by the service, in the
 * transaction that would write). Sessions and items of no lineage (an operator's) are no
 * executor's: not found too. Its evidence actor names lineage and generation.
 */
import { BatonError } from '../core/errors.js';
import type { MissionsService } from './service.js';
import type { SessionRecord, WorkItemRecord } from './model.js';

export interface ExecutorScope {
  readonly lineage: string;
  readonly generation: number;
}

/** The evidence actor of an executor's commands. */
export function executorActor(s: ExecutorScope): string {
  return `executor:${s.lineage}#${s.generation}`;
}

/** The item, if an executor of `lineage` may act on it (undefined: an operator, any item). */
export async function visibleItem(
  h: MissionsService,
  id: string,
  lineage: string | undefined,
): Promise<WorkItemRecord> {
  const item = await h.getItem(id);
  if (lineage !== undefined && item.lineage !== lineage)
    throw new BatonError('work_item_not_found', 'no such work item');
  return item;
}

/**
 * The session (without its chain: read it a page at a time, or whole with `MissionsService.events`),
 * if an executor of `lineage` may see it (undefined: an operator).
 */
export async function visibleSession(
  h: MissionsService,
  id: string,
  lineage: string | undefined,
): Promise<SessionRecord> {
  const session = await h.getSessionRecord(id);
  if (lineage !== undefined && session.lineage !== lineage)
    throw new BatonError('session_not_found', 'no such session');
  return session;
}
