/**
 * Response schemas of the occurrences context's records (src/occurrences/model.ts and the service
 * result types). Fastify serializes responses with these, so a member missing here would be
 * dropped: test/server/lifecycle.test.ts compares every HTTP answer with the service's own.
 */
import {
  BYPASS_PATH_KINDS,
  BYPASS_PATH_STATUSES,
  EFFECTS,
  INTERPRETATIONS,
  LINKED_ID_TYPES,
  MISSING_KNOWLEDGE_REASONS,
  OUTCOMES,
  PHASES,
  REMEDY_KINDS,
} from '../../occurrences/index.js';
import {
  anyObject,
  array,
  bool,
  count,
  epochMs,
  evidenceEvent,
  name,
  nullable,
  object,
  oneOf,
  type Schema,
  pageLimit500,
} from './common.js';

const str: Schema = { type: 'string' };

export const linkedId: Schema = object({ type: oneOf(LINKED_ID_TYPES), value: str });

export const occurrence: Schema = object({
  id: str,
  lineage: str,
  creationBinding: object({ scope: str, key: str, requestDigest: str }),
  linkedIds: array(linkedId),
  provider: object({
    profileId: str,
    profileVersion: str,
    profileDigest: str,
    account: str,
    environment: str,
    requestDigest: str,
    nativeKeyRule: str,
    nativeKey: nullable(str),
    providerReference: nullable(str),
  }),
  capturedGeneration: count,
  entryDeadline: epochMs,
  authority: object({ id: str, amount: count, unit: str }),
  phase: oneOf(PHASES),
  outcome: oneOf(OUTCOMES),
  effect: oneOf(EFFECTS),
  conflict: bool,
  enteredAt: nullable(epochMs),
  enteredGeneration: nullable(count),
  releasedAt: nullable(epochMs),
  resolvedAt: nullable(epochMs),
  remedyOf: nullable(str),
  remedyKind: nullable(oneOf(REMEDY_KINDS)),
  reissueOf: nullable(str),
  createdAt: epochMs,
  updatedAt: epochMs,
  version: count,
  unresolved: bool,
});

export const occurrenceList: Schema = array(occurrence);

export const createResult: Schema = object({ occurrence, created: bool });

export const occurrenceResult: Schema = object({ occurrence });

const chainCheck: Schema = object(
  {
    ok: { type: 'boolean' },
    scope: {
      ...oneOf(['chain', 'handovers']),
      description:
        'chain: every event of the chain was walked and its end compared with the recorded head; handovers: each handover shown, its links to the events on either side, and the chain’s end against its recorded head (GET /v1/evidence/verify walks every chain)',
    },
    problems: { type: 'integer', minimum: 0 },
    verified: {
      ...array({ type: 'integer', minimum: 0 }),
      description: 'seq of every event shown that the check verified',
    },
    firstBroken: object({ seq: { type: 'integer' }, subject: nullable(str), reason: str }),
  },
  ['firstBroken'],
);

export const occurrenceDetail: Schema = object({
  occurrence,
  evidence: array(evidenceEvent),
  handovers: {
    ...array(evidenceEvent),
    description: 'takeover events of the lineage that delivered this occurrence',
  },
  chains: object({ occurrence: chainCheck, lineage: chainCheck }),
});

/** `GET /v1/occurrences`: every member optional; times are RFC 3339, `to` exclusive. */
export const listQuery: Schema = object(
  {
    phase: oneOf(PHASES),
    outcome: oneOf(OUTCOMES),
    lineage: name,
    profile: name,
    creationKey: name,
    from: { type: 'string', maxLength: 64, description: 'RFC 3339; created at or after' },
    to: { type: 'string', maxLength: 64, description: 'RFC 3339; created before' },
    cursor: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,400}$', description: 'opaque, from nextCursor' },
    limit: pageLimit500(50),
  },
  ['phase', 'outcome', 'lineage', 'profile', 'creationKey', 'from', 'to', 'cursor', 'limit'],
);

export const occurrencePage: Schema = object({
  occurrences: array(occurrence),
  nextCursor: nullable(str),
});

export const entryTicket: Schema = object({
  occurrence,
  request: anyObject,
  requestDigest: str,
  nativeKey: nullable(str),
  nativeKeyHeader: nullable(str),
  profile: object({ id: str, version: str, digest: str }),
  account: str,
  environment: str,
});

export const observeResult: Schema = object(
  {
    occurrence,
    effective: bool,
    interpretation: nullable(oneOf(INTERPRETATIONS)),
    missingKnowledge: nullable(oneOf(MISSING_KNOWLEDGE_REASONS)),
    changed: bool,
    notRecorded: {
      ...oneOf(['repeat', 'capped']),
      description:
        'Present only when this acknowledgement was answered without being appended to the evidence: `repeat` (an identical one is recorded already) or `capped` (the occurrence keeps no more distinct unauthenticated acknowledgements)',
    },
  },
  ['notRecorded'],
);

export const domainLimits: Schema = object({
  maxPendingPerLineage: count,
  maxInFlightPerLineage: count,
  maxPendingPerDomain: count,
  maxInFlightPerDomain: count,
  entryWindowSeconds: count,
});

export const bypassPath: Schema = object({
  kind: oneOf(BYPASS_PATH_KINDS),
  status: oneOf(BYPASS_PATH_STATUSES),
  description: { type: 'string', minLength: 1, maxLength: 1000 },
});

export const domain: Schema = object({
  id: str,
  kid: str,
  publicKey: str,
  limits: domainLimits,
  bypassPaths: array(bypassPath),
  createdAt: epochMs,
  updatedAt: epochMs,
  version: count,
});

export const authority: Schema = object({
  id: str,
  unit: str,
  total: count,
  reserved: count,
  consumed: count,
  createdAt: epochMs,
  updatedAt: epochMs,
  version: count,
});

export const registeredProfile: Schema = object({
  id: str,
  version: str,
  digest: str,
  document: anyObject,
  registeredAt: epochMs,
});

export const takeoverResult: Schema = object({
  lineage: str,
  generation: count,
  retiredGeneration: nullable(count),
  credential: { type: 'string', description: 'the executor credential, shown once' },
  reserved: occurrenceList,
  unresolved: occurrenceList,
  // Mission build spec A6: the lineage's paused, suppressed and handed-off harness items.
  held: array({
    type: 'object',
    additionalProperties: false,
    required: ['id', 'kind', 'state', 'actionClass', 'binding', 'version'],
    properties: {
      id: str,
      kind: str,
      state: { type: 'string', enum: ['paused', 'suppressed', 'handed_off'] },
      actionClass: str,
      binding: { type: ['object', 'null'], additionalProperties: true },
      version: count,
    },
  }),
  heldMore: {
    type: 'boolean',
    description: 'more held items than `held` lists (at most 1,000); GET /v1/harness/items lists them all',
  },
});

/**
 * `GET /v1/lineages/{lineage}`: the current generation and one page of the lineage's history.
 * Position n of the history is generation n and the n-th event of `lineage:<id>` (each takeover
 * issues one and appends the other); a page holds the same positions of each list.
 */
export const lineageView: Schema = object({
  id: str,
  generation: { ...count, description: 'the current generation' },
  retiredGenerations: {
    ...array(count),
    description: 'every generation of the lineage that a takeover retired, on every page',
  },
  credentials: {
    ...array(object({ generation: count, issuedAt: epochMs, retiredAt: nullable(epochMs) })),
    description: "the page's generations, oldest first",
  },
  evidence: { ...array(evidenceEvent), description: "the page's takeover events, oldest first" },
  evidenceNextCursor: {
    ...nullable({ type: 'string' }),
    description: 'the `cursor` of the next page; null only on the last page',
  },
});

export const openWork: Schema = object({
  lineage: str,
  reserved: occurrenceList,
  unresolved: occurrenceList,
});

function countsOf(values: readonly string[]): Schema {
  return object(Object.fromEntries(values.map((v) => [v, count])));
}

export const counts: Schema = object({
  total: count,
  byPhase: countsOf(PHASES),
  byOutcome: countsOf(OUTCOMES),
  unresolved: count,
  conflicts: count,
});
