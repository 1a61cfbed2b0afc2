/**
 * The harness over HTTP (build spec A6; docs/harness.md): sessions, work items, dispatch/resume,
 * retry, complete (executor), stop/requeue (operator), the evidence and the published policy.
 * Executors act only on their own lineage's items and sessions (another lineage's — or one of no
 * lineage — answers like a missing one, also when named as the session or parent of new work),
 * create only in their own lineage (a body naming another is 403 forbidden) and dispatch under
 * their own generation. A committed Mission stop answers 403/503 (C-A25).
 */
import { BatonError } from '../../core/errors.js';
import {
  ACTION_CLASSES,
  BEHAVIOURS,
  DEFAULT_MATRIX,
  ITEM_KINDS,
  isActionClass,
  ITEM_STATES,
  missionSubject,
  sessionSubject,
  workSubject,
  visibleItem as itemFor,
  visibleSession as sessionFor,
  type MissionsService,
  type WorkItemRecord,
} from '../../missions/index.js';
import { principalActor } from '../auth.js';
import { listScope } from '../../core/cursor.js';
import { CURSOR_PARAM, CURSOR_SCHEMA } from '../cursor.js';
import { bodyObject, param, timed, type HandlerInput, type RouteSpec, type ServerDeps } from '../route.js';
import {
  anyJson,
  anyObject,
  array,
  epochMs,
  evidenceEvent,
  int,
  name,
  nullable,
  object,
  oneOf,
  type Schema,
} from '../schemas/common.js';
import { emptyBody } from '../schemas/inputs.js';
import type { EvidenceEvent } from '../../store/evidence-log.js';
import { evidencePageQuery, readEvidencePage } from './queries.js';

const idParams = object({ id: name });

export const DEFAULT_ITEM_PAGE = 100;
export const MAX_ITEM_PAGE = 1000;

/**
 * The scope of `GET /v1/harness/items` cursors (src/core/cursor.ts): the list under its filters,
 * the Mission and the set of states (sorted and deduplicated: `state=a,b` and `state=b,a` are one
 * query), so a cursor of one query used with another is refused, never read as a position in a
 * list it was not issued for. `limit` is not bound.
 */
const itemsScope = (origin?: string, mission?: string, states?: readonly string[]): string =>
  listScope('harness items', {
    origin,
    mission,
    state: states === undefined ? undefined : [...new Set(states)].sort(),
  });

/** A `GET /v1/harness/items` cursor: the last item's (createdAt, id), the list's order. */
function decodeItemCursor(
  deps: ServerDeps,
  scope: string,
  cursor: string,
): { createdAt: number; id: string } {
  return deps.cursors.read(scope, cursor, CURSOR_PARAM, ([createdAt, id, ...rest]) =>
    rest.length === 0 && Number.isSafeInteger(createdAt) && typeof id === 'string' && id.length <= 128
      ? { createdAt: createdAt as number, id }
      : undefined,
  );
}

/** `?state=`: one or more item states, comma-separated, each a known one (none empty). */
const STATE_LIST = `(?:${ITEM_STATES.join('|')})`;
const stateFilter: Schema = {
  type: 'string',
  pattern: `^${STATE_LIST}(?:,${STATE_LIST})*$`,
  description: `comma-separated item states, each one of ${ITEM_STATES.join(', ')}`,
};

const binding: Schema = {
  type: 'object',
  additionalProperties: true,
  required: ['mission_id', 'mission_origin', 'stop_policy'],
};

export const workItem: Schema = {
  type: 'object',
  additionalProperties: true,
  required: ['id', 'kind', 'state', 'actionClass', 'version'],
  properties: {
    id: name,
    kind: oneOf(ITEM_KINDS),
    state: oneOf(ITEM_STATES),
    binding: nullable(binding),
    actionClass: oneOf(ACTION_CLASSES),
    version: int,
    createdAt: epochMs,
    updatedAt: epochMs,
  },
};

const itemBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'action_class'],
  properties: {
    queue_item_id: name,
    kind: oneOf(ITEM_KINDS),
    action_class: oneOf(ACTION_CLASSES),
    session_id: name,
    lineage: name,
    parent_item: name,
    mission_binding: anyObject,
    not_before: { type: 'string' },
    expires_at: { type: 'string' },
    idempotency_key: name,
    handle: anyObject,
  },
};

const sessionBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['mission_binding'],
  properties: { session_id: name, lineage: name, mission_binding: anyObject },
};

const events: Schema = array({ type: 'object', additionalProperties: true });

/**
 * A session's chain gains an event with every transition of every item in it, so it is answered a
 * page at a time as `GET /v1/evidence?subject=` is (`limit` 1..500, default 50; `cursor`); a page
 * never passes for the whole chain: `evidenceNextCursor` is null only on its last page.
 */
const chainPageQuery = object({ ...evidencePageQuery }, ['cursor', 'limit']);
const chainPage = { evidence: array(evidenceEvent), evidenceNextCursor: nullable({ type: 'string' }) };

async function chainPageOf(
  deps: ServerDeps,
  subject: string,
  input: HandlerInput,
): Promise<{ evidence: EvidenceEvent[]; evidenceNextCursor: string | null }> {
  const page = await readEvidencePage(deps, subject, input.query);
  return { evidence: page.events, evidenceNextCursor: page.nextCursor };
}

function harnessOf(deps: ServerDeps): MissionsService {
  if (deps.harness === undefined) throw new BatonError('unavailable', 'this server runs no harness');
  return deps.harness;
}

/** An executor acts only on its own lineage's items; operators see all. */
function visibleItem(deps: ServerDeps, input: HandlerInput, id: string): Promise<WorkItemRecord> {
  return itemFor(harnessOf(deps), id, executorLineage(input));
}

/** The executor's lineage (its items only, what it creates in it); undefined for an operator. */
function executorLineage(input: HandlerInput): string | undefined {
  const p = input.principal;
  return p?.kind === 'executor' ? p.lineage : undefined;
}

function actor(input: HandlerInput): string {
  const p = input.principal;
  if (p === undefined) throw new BatonError('unauthenticated', 'a credential is required');
  return principalActor(p);
}

/**
 * What each item command checks (docs/harness.md). `complete` records the end of work already done
 * — each consequential action in it was checked at provider entry (A3.6) — so it runs no Mission
 * check: refusing it would only leave the item `running` (the seed checks before resume, retry
 * dispatch, wake-up and cached access use, not at completion); a stop already moved the item.
 */
const ITEM_COMMAND_SUMMARY = {
  resume: 'Resume a work item (A3.1 check first; a stop is committed, then refused)',
  retry:
    'Retry a work item: a new item with the same idempotency_key, queued, or suppressed (evidenced) under a Mission known final; refused under a non-active parent; its dispatch runs the A3.1 check',
  complete:
    'Complete a running work item (no Mission check: it records work already done, each consequential action checked at provider entry)',
} as const;

function itemCommand(
  deps: ServerDeps,
  verb: 'resume' | 'retry' | 'complete',
  run: (h: MissionsService, id: string, input: HandlerInput) => Promise<unknown>,
): RouteSpec {
  return {
    method: 'POST',
    url: `/v1/harness/items/:id/${verb}`,
    operationId: `${verb}WorkItem`,
    summary: ITEM_COMMAND_SUMMARY[verb],
    tag: 'harness',
    roles: ['executor'],
    schema: { params: idParams, body: emptyBody, response: { 200: anyObject, 201: workItem } },
    handler: async (input) => {
      const id = param(input, 'id');
      await visibleItem(deps, input, id);
      const body = await timed(deps, `harness_${verb}`, () => run(harnessOf(deps), id, input));
      return { status: verb === 'retry' ? 201 : 200, body };
    },
  };
}

const generationOf = (input: HandlerInput): number | undefined =>
  input.principal?.kind === 'executor' ? input.principal.generation : undefined;

export function harnessRoutes(deps: ServerDeps): RouteSpec[] {
  return [
    {
      method: 'POST',
      url: '/v1/harness/sessions',
      operationId: 'createHarnessSession',
      summary: 'A governed session bound to a Mission (HAR-01/02)',
      tag: 'harness',
      roles: ['executor', 'operator'],
      schema: { body: sessionBody, response: { 201: anyObject } },
      handler: async (input) => {
        // As for items: an executor's sessions belong to its own lineage (so it can read and taint
        // them); a body naming another lineage is 403 forbidden, nothing written.
        const made = await timed(deps, 'harness_session_create', () =>
          harnessOf(deps).createSession(
            bodyObject(input),
            actor(input),
            executorLineage(input),
            generationOf(input),
          ),
        );
        return { status: 201, body: made };
      },
    },
    {
      method: 'POST',
      url: '/v1/harness/items',
      operationId: 'createWorkItem',
      summary:
        'Enqueue governed work: a bound task node, queue item, job or sub-agent handle (HAR-04/11/14/20); created suppressed (evidenced) under a Mission known final (HAR-13)',
      tag: 'harness',
      roles: ['executor', 'operator'],
      schema: { body: itemBody, response: { 201: workItem } },
      handler: async (input) => {
        // An executor's items belong to its own lineage (a body naming another is 403 forbidden, as
        // GET /v1/occurrences?lineage= naming another is), and the session and parent item it names
        // must be that lineage's: else not found, as an unknown id (checked in the create's
        // transaction, nothing written).
        const made = await timed(deps, 'harness_create', () =>
          harnessOf(deps).createItem(
            bodyObject(input),
            actor(input),
            executorLineage(input),
            generationOf(input),
          ),
        );
        return { status: 201, body: made };
      },
    },
    {
      method: 'GET',
      url: '/v1/harness/items/:id',
      operationId: 'getWorkItem',
      summary:
        'A work item and its evidence chain (work:<id>), oldest first, a page at a time (limit, cursor; evidenceNextCursor null on the last page)',
      tag: 'harness',
      roles: ['executor', 'operator'],
      schema: {
        params: idParams,
        querystring: chainPageQuery,
        response: { 200: object({ item: workItem, ...chainPage }) },
      },
      handler: async (input) => {
        const id = param(input, 'id');
        return timed(deps, 'harness_get_item', async () => {
          const item = await visibleItem(deps, input, id);
          return { body: { item, ...(await chainPageOf(deps, workSubject(id), input)) } };
        });
      },
    },
    {
      method: 'GET',
      url: '/v1/harness/items',
      operationId: 'listWorkItems',
      summary: 'Work items, optionally of one Mission (origin and mission together) and in some states',
      tag: 'harness',
      roles: ['operator'],
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            origin: {
              type: 'string',
              minLength: 1,
              maxLength: 512,
              description: "the Mission's origin; only with `mission`",
            },
            mission: { ...name, description: "the Mission's id; only with `origin`" },
            state: stateFilter,
            cursor: CURSOR_SCHEMA,
            limit: {
              type: 'string',
              pattern: '^[1-9][0-9]{0,3}$',
              description: `1..${MAX_ITEM_PAGE}, default ${DEFAULT_ITEM_PAGE}`,
            },
          },
        },
        response: { 200: object({ items: array(workItem), nextCursor: nullable({ type: 'string' }) }) },
      },
      handler: async (input) => {
        const { origin, mission, state, cursor, limit: text } = input.query;
        const limit = Number(text ?? DEFAULT_ITEM_PAGE);
        if (limit > MAX_ITEM_PAGE)
          throw new BatonError('input_invalid', `limit must be 1..${MAX_ITEM_PAGE}`, { path: '$.limit' });
        // A filter is applied or refused, never dropped: half a Mission is not "every item".
        if ((origin === undefined) !== (mission === undefined))
          throw new BatonError('input_invalid', 'origin and mission go together', {
            path: origin === undefined ? '$.origin' : '$.mission',
          });
        const states = state?.split(',');
        const scope = itemsScope(origin, mission, states);
        const filter = {
          ...(origin !== undefined && mission !== undefined && { mission: { origin, id: mission } }),
          ...(states !== undefined && { states }),
          ...(cursor !== undefined && { after: decodeItemCursor(deps, scope, cursor) }),
          // One row more than the page says whether another page exists, without a COUNT.
          limit: limit + 1,
        };
        const rows = await timed(deps, 'harness_list_items', () => harnessOf(deps).listItems(filter));
        const items = rows.slice(0, limit);
        const last = items.at(-1);
        const nextCursor =
          rows.length > limit && last !== undefined
            ? deps.cursors.issue(scope, [last.createdAt, last.id])
            : null;
        return { body: { items, nextCursor } };
      },
    },
    {
      method: 'POST',
      url: '/v1/harness/dispatch',
      operationId: 'dispatchWorkItem',
      summary: 'Dispatch a queued or paused item after the resume check (A3.1)',
      tag: 'harness',
      roles: ['executor'],
      schema: {
        body: object({ itemId: name }),
        response: { 200: object({ item: workItem, recheckAt: nullable(epochMs) }) },
      },
      handler: async (input) => {
        const id = String(bodyObject(input)['itemId']);
        await visibleItem(deps, input, id);
        return {
          body: await timed(deps, 'harness_dispatch', () =>
            harnessOf(deps).dispatch(id, actor(input), generationOf(input)),
          ),
        };
      },
    },
    itemCommand(deps, 'resume', (h, id, input) => h.dispatch(id, actor(input), generationOf(input))),
    // AOC-REQ-006: every executor command is fenced again inside its transaction (docs/api.md).
    itemCommand(deps, 'retry', (h, id, input) => h.retry(id, actor(input), generationOf(input))),
    itemCommand(deps, 'complete', (h, id, input) => h.complete(id, actor(input), generationOf(input))),
    {
      method: 'POST',
      url: '/v1/harness/items/:id/stop',
      operationId: 'stopWorkItem',
      summary: 'Operator stop (reason operator_stop); terminate releases the reserved occurrence',
      tag: 'harness',
      roles: ['operator'],
      schema: {
        params: idParams,
        body: object({ decision: oneOf(BEHAVIOURS.filter((b) => b !== 'continue')) }),
        response: { 200: workItem },
      },
      handler: async (input) => ({
        body: await timed(deps, 'harness_stop', () =>
          harnessOf(deps).stop(param(input, 'id'), bodyObject(input)['decision'], actor(input)),
        ),
      }),
    },
    {
      method: 'POST',
      url: '/v1/harness/items/:id/requeue',
      operationId: 'requeueWorkItem',
      summary: 'Operator requeue: back to queued, checked again at the next dispatch',
      tag: 'harness',
      roles: ['operator'],
      schema: { params: idParams, body: emptyBody, response: { 200: workItem } },
      handler: async (input) => ({
        body: await timed(deps, 'harness_requeue', () =>
          harnessOf(deps).requeue(param(input, 'id'), actor(input)),
        ),
      }),
    },
    {
      method: 'GET',
      url: '/v1/harness/evidence',
      operationId: 'listHarnessEvidence',
      summary:
        'The evidence chain of one Mission (mission:<origin>#<id>), oldest first, a page at a time (limit, cursor; nextCursor null on the last page)',
      tag: 'harness',
      roles: ['operator'],
      schema: {
        // A Mission's chain gains an event per item transition: paged as GET /v1/evidence?subject=.
        querystring: object({ origin: { type: 'string' }, mission: name, ...evidencePageQuery }, [
          'cursor',
          'limit',
        ]),
        response: {
          200: object({ subject: { type: 'string' }, events, nextCursor: nullable({ type: 'string' }) }),
        },
      },
      handler: async (input) => {
        const subject = missionSubject(input.query['origin'] ?? '', input.query['mission'] ?? '');
        const page = await readEvidencePage(deps, subject, input.query);
        return { body: { subject, ...page } };
      },
    },
    {
      method: 'GET',
      url: '/v1/harness/policy',
      operationId: 'getHarnessPolicy',
      summary:
        'Published staleness bounds, the default stop matrix, the claimed subset and paths outside it (HAR-27)',
      tag: 'harness',
      roles: ['operator'],
      schema: { response: { 200: anyObject } },
      handler: () => {
        const h = harnessOf(deps);
        return Promise.resolve({
          body: {
            bounds: h.bounds,
            matrix: {
              ref: DEFAULT_MATRIX.ref,
              digest: DEFAULT_MATRIX.digest,
              document: DEFAULT_MATRIX.matrix,
            },
            claim: ['governed queue (dispatch, resume, retry)', 'occurrence provider entry (enter)'],
            outside: [
              'executor code between dispatch and enter',
              'the domain’s declared bypass paths',
              'reconciliation reads (C-A26)',
            ],
          },
        });
      },
    },
    {
      method: 'GET',
      url: '/v1/missions/:origin/:missionId',
      operationId: 'getMissionView',
      summary: 'The stored Mission view and what a check would conclude now (A3.3, A3.5)',
      tag: 'missions',
      roles: ['operator', 'executor'],
      schema: {
        params: object({ origin: { type: 'string', minLength: 1, maxLength: 512 }, missionId: name }),
        // The class the caller will act as sets the freshness bound (docs/harness.md; HAR-25).
        querystring: object({ action_class: oneOf(ACTION_CLASSES) }, ['action_class']),
        response: { 200: object({ view: nullable(anyObject), assessment: anyJson }) },
      },
      handler: async (input) => {
        const h = harnessOf(deps);
        const view = await timed(deps, 'mission_view', () =>
          h.getView(param(input, 'origin'), param(input, 'missionId')),
        );
        const cls = input.query['action_class'];
        return {
          body: { view: view ?? null, assessment: h.assessView(view, isActionClass(cls) ? cls : undefined) },
        };
      },
    },
    ...sessionAndRebindRoutes(deps),
  ];
}

/** An executor sees only its own lineage's sessions (another lineage's answers like a missing one). */
function visibleSession(deps: ServerDeps, input: HandlerInput, id: string) {
  return sessionFor(harnessOf(deps), id, executorLineage(input));
}

/** A6: `GET /v1/harness/sessions/{id}`, `POST …/{id}/taint` (HAR-29), `POST /v1/harness/items/{id}/rebind` (A7#24). */
function sessionAndRebindRoutes(deps: ServerDeps): RouteSpec[] {
  return [
    {
      method: 'GET',
      url: '/v1/harness/sessions/:id',
      operationId: 'getHarnessSession',
      summary:
        'A governed session (binding, taint) and its evidence chain (session:<id>), oldest first, a page at a time (limit, cursor; evidenceNextCursor null on the last page)',
      tag: 'harness',
      roles: ['executor', 'operator'],
      schema: {
        params: idParams,
        querystring: chainPageQuery,
        response: { 200: object({ session: anyObject, ...chainPage }) },
      },
      handler: async (input) => {
        const id = param(input, 'id');
        return timed(deps, 'harness_get_session', async () => {
          // The record first, then the page: the page holds every event the record reflects.
          const session = await visibleSession(deps, input, id);
          return { body: { session, ...(await chainPageOf(deps, sessionSubject(id), input)) } };
        });
      },
    },
    {
      method: 'POST',
      url: '/v1/harness/sessions/:id/taint',
      operationId: 'taintHarnessSession',
      summary:
        'Untrusted content entered the session (HAR-29): sticky; its egress items are suppressed (session_tainted)',
      tag: 'harness',
      roles: ['executor', 'operator'],
      schema: { params: idParams, body: object({ source: name }), response: { 200: anyObject } },
      handler: async (input) => {
        const id = param(input, 'id');
        await visibleSession(deps, input, id);
        const tainted = await timed(deps, 'harness_taint', () =>
          harnessOf(deps).taintSession(id, bodyObject(input), actor(input), generationOf(input)),
        );
        return { body: tainted };
      },
    },
    {
      method: 'POST',
      url: '/v1/harness/items/:id/rebind',
      operationId: 'rebindWorkItem',
      summary:
        'Operator rebind of a superseded Mission’s held item to its active successor (A7#24, `rebound`)',
      tag: 'harness',
      roles: ['operator'],
      schema: { params: idParams, body: object({ mission_binding: anyObject }), response: { 200: workItem } },
      handler: async (input) => ({
        body: await timed(deps, 'harness_rebind', () =>
          harnessOf(deps).rebind(param(input, 'id'), bodyObject(input), actor(input)),
        ),
      }),
    },
  ];
}
