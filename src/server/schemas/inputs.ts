/**
 * Request-body schemas (src/occurrences/inputs.ts, inputs-observe.ts). The executor's credential
 * is its bearer token, never a body member; the server adds it when it calls the service.
 */
import {
  BYPASS_PATH_KINDS,
  CALLER_LINKED_ID_TYPES,
  EXPECTED_BINDING_FIELDS,
  OBSERVATION_RESULTS,
  REMEDY_KINDS,
} from '../../occurrences/index.js';
import { array, bool, digest, name, object, oneOf, text, type Schema } from './common.js';
import { bypassPath, domainLimits } from './records.js';

const positive: Schema = { type: 'integer', minimum: 1 };

export const domainConfigBody: Schema = object({
  id: {
    ...name,
    description:
      'Not `local` in any case: urn:baton:local is the unsigned local producer (400 input_invalid)',
  },
  limits: object((domainLimits['properties'] ?? {}) as Record<string, Schema>),
  bypassPaths: { ...array(bypassPath, BYPASS_PATH_KINDS.length), minItems: BYPASS_PATH_KINDS.length },
});

export const authorityBody: Schema = object({ id: name, unit: name, total: positive });

export const profileBody: Schema = {
  type: 'object',
  additionalProperties: true,
  required: ['format', 'id', 'version'],
  description: 'a provider profile document (baton.provider-profile/1); validated by the occurrences service',
};

const linkedIds: Schema = array(object({ type: oneOf(CALLER_LINKED_ID_TYPES), value: text }), 32);

const createMembers = {
  creationKey: name,
  provider: object({ profileId: name, profileVersion: name, account: text, environment: text }, [
    'account',
    'environment',
  ]),
  request: { type: 'object', additionalProperties: true },
  authority: object({ id: name, amount: positive }),
  linkedIds,
};

/** `workItemId`: the harness work item of a governed occurrence (docs/harness.md, A3.6). */
export const createBody: Schema = object({ ...createMembers, workItemId: name }, ['linkedIds', 'workItemId']);

/** `workItemId` as on create: a remedy done for a governed work item is gated by it. */
export const remedyBody: Schema = object({ ...createMembers, kind: oneOf(REMEDY_KINDS), workItemId: name }, [
  'linkedIds',
  'workItemId',
]);

/** `workItemId` as on create: the successor of a governed occurrence is governed by that item. */
export const reissueBody: Schema = object({ creationKey: name, linkedIds, workItemId: name }, [
  'linkedIds',
  'workItemId',
]);

const expectFields: readonly string[] = EXPECTED_BINDING_FIELDS;

/** Optional body: absent, `null` or an object. */
export const enterBody: Schema = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: {
    expect: object(Object.fromEntries(expectFields.map((f) => [f, text])), expectFields),
  },
};

/** create-and-enter (issue 16 §4): the create body plus entry's optional `expect`. */
export const createEnterBody: Schema = object(
  {
    ...createMembers,
    workItemId: name,
    expect: (enterBody['properties'] as Record<string, Schema>)['expect'] ?? {},
  },
  ['linkedIds', 'workItemId', 'expect'],
);

export const emptyBody: Schema = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: {},
  description: 'no body (or an empty object)',
};

/**
 * Optional body: absent, `null`, `{}` or `{ expectedGeneration }` — the compare-and-set of a
 * takeover (docs/api.md): the generation it is meant to retire, 0 for a lineage with none yet.
 */
export const takeoverBody: Schema = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: {
    expectedGeneration: {
      type: 'integer',
      minimum: 0,
      description:
        'the generation this takeover is meant to retire (0: the lineage has none yet); another current generation is 409 generation_mismatch, nothing changed',
    },
  },
};

export const releaseBody: Schema = object({ requestDigest: digest });

const carriedFields = ['account', 'environment', 'requestDigest', 'nativeKey', 'providerReference'];

const observationMembers = {
  occurrenceId: { ...name, description: 'optional; must equal the occurrence in the path' },
  observedAt: {
    anyOf: [
      { type: 'string', minLength: 1, maxLength: 64 },
      { type: 'integer', minimum: 0 },
    ],
    description: 'RFC 3339 date-time or epoch milliseconds',
  },
  result: oneOf(OBSERVATION_RESULTS),
  nativeStatus: { type: 'string', minLength: 1, maxLength: 64 },
  response: { description: 'the provider answer, any JSON value' },
  carried: object(
    Object.fromEntries(carriedFields.map((f) => [f, { type: 'string', maxLength: 512 }])),
    carriedFields,
  ),
  complete: bool,
  authentication: {
    ...object({ verified: bool, pin: text }, ['pin']),
    description: 'may only say verified: false — an executor cannot authenticate a provider answer',
  },
};

const observationOptional = ['occurrenceId', 'nativeStatus', 'response', 'complete', 'authentication'];

export const acknowledgementBody: Schema = object(observationMembers, observationOptional);

export const observationBody: Schema = object({ ...observationMembers, source: name }, observationOptional);

export const tokenBody: Schema = object(
  {
    role: oneOf(['operator', 'admin']),
    name: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9 ._:@/-]{0,127}$' },
  },
  ['name'],
);
