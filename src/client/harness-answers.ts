/**
 * The harness answers `HarnessClient` acts on, checked before a call resolves (as answer-shape.ts
 * does for occurrences). Member names are not enough: a `dispatch` answering `{item: null}` would
 * resolve and throw a TypeError at `item.id`, one answering a `suppressed` item would read as
 * permission to run (A3.1: only a running item after `continue` allows work), a `taint` answering
 * `tainted: false` would let the caller believe egress is suppressed (HAR-29), a `complete`
 * answering a running item would be taken as done. Each check returns why the answer is not what
 * the call promises, or undefined; the client refuses it as `baton_response_invalid` (fail closed).
 */
import { ACTION_CLASSES, ITEM_KINDS, ITEM_STATES } from '../missions/model.js';
import { isRecord, isString, type Why } from './answer-shape.js';

/** A version or an epoch-ms instant: a non-negative safe integer. */
const isCount = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 0;

/** A work item as the routes answer it (the route schema `workItem`): typed id, kind, state, class. */
export function workItemFault(v: unknown, at: string, id?: string): Why {
  if (!isRecord(v)) return `"${at}" that is not a work item`;
  if (!isString(v['id'])) return `"${at}" without an id`;
  if (id !== undefined && v['id'] !== id) return `"${at}" for another item`;
  if (!(ITEM_KINDS as readonly unknown[]).includes(v['kind'])) return `"${at}" without a known kind`;
  if (!(ITEM_STATES as readonly unknown[]).includes(v['state'])) return `"${at}" without a known state`;
  if (!(ACTION_CLASSES as readonly unknown[]).includes(v['actionClass']))
    return `"${at}" without a known actionClass`;
  if (!isCount(v['version'])) return `"${at}" without an integer version`;
  return undefined;
}

/** A session as the routes answer it: typed id, a boolean `tainted`, a binding, a version. */
export function sessionFault(v: unknown, at: string, id?: string): Why {
  if (!isRecord(v)) return `"${at}" that is not a session`;
  if (!isString(v['id'])) return `"${at}" without an id`;
  if (id !== undefined && v['id'] !== id) return `"${at}" for another session`;
  if (typeof v['tainted'] !== 'boolean') return `"${at}" without a boolean tainted`;
  if (!isRecord(v['binding'])) return `"${at}" without a binding`;
  if (!isCount(v['version'])) return `"${at}" without an integer version`;
  return undefined;
}

/** `taint` promises the session tainted from now on (HAR-29: sticky); anything else is not that. */
export function taintedFault(v: unknown, id: string): Why {
  const why = sessionFault(v, 'session', id);
  if (why !== undefined) return why;
  return (v as { tainted: boolean }).tainted === true ? undefined : 'a session that is not tainted';
}

/**
 * dispatch/resume promise the A3.1 check answered `continue`: the item named, now `running`, and
 * `recheckAt` epoch ms or null (the route schema `nullable(epochMs)`). Any other state (suppressed,
 * paused, terminated…) is no permission to run and never passes for one.
 */
export function dispatchFault(v: Record<string, unknown>, id: string): Why {
  const why = workItemFault(v['item'], 'item', id);
  if (why !== undefined) return why;
  const state = (v['item'] as { state: string }).state;
  if (state !== 'running') return `a ${state} item (only a running one allows work, A3.1)`;
  const at = v['recheckAt'];
  if (at !== null && !isCount(at)) return '"recheckAt" that is neither epoch ms nor null';
  return undefined;
}

/** `complete` promises the item `done` (running → done). */
export function completedFault(v: unknown, id: string): Why {
  const why = workItemFault(v, 'item', id);
  if (why !== undefined) return why;
  const state = (v as { state: string }).state;
  return state === 'done' ? undefined : `a ${state} item, not a done one`;
}

/** `retry` promises a new item whose `retryOf` is the one retried (A3.8). */
export function retryFault(v: unknown, of: string): Why {
  const why = workItemFault(v, 'item');
  if (why !== undefined) return why;
  const r = v as { id: string; retryOf: unknown };
  if (r.retryOf !== of) return 'an item that is not a retry of the one named';
  if (r.id === of) return 'the retried item itself, not a new one';
  return undefined;
}
