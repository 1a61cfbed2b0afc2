/**
 * Continuity observation records (B6; the name avoids the AOC provider `observations` routes).
 * An authenticated operator may submit an unsigned record only under the local producer
 * `urn:baton:local` (it names none, or names it); any other producer must be signed and verify
 * under a key pinned for it — Baton's own domain key, or the keys an admin pinned
 * (routes/continuity-producers.ts) — and no submission, signed or not, may claim Baton's own
 * producer or record ids (OBS-08 ¶19, OBS-12 ¶25, B7-12, B7-13): only
 * the records Baton projects stand there, so a verified domain-key record is accepted only as the
 * same bytes Baton already stored. The store decides all of it (`ContinuityStore.submit`).
 * Metrics and coverage run the idempotent handoff projector first. Nothing here is an
 * authorization: CIF answers carry `authorizes: false` (OBS-15).
 */
import { BatonError, isBatonError } from '../../core/errors.js';
import { parseRfc3339 } from '../../core/time.js';
import { OBSERVATION_MEDIA_TYPE, readRecord, type ObservationRecord } from '../../observations/index.js';
import type { ContinuityStore, ProjectionObserver } from '../../store/index.js';
import { actorOf } from '../auth.js';
import { bodyObject, timed, tokenOf, type HandlerInput, type RouteSpec, type ServerDeps } from '../route.js';
import { anyObject } from '../schemas/common.js';
import {
  cifQuery,
  cifResult,
  coverageReport,
  ficQuery,
  ficResult,
  profileResult,
  recordBody,
  recordChain,
  recordQuery,
  submitResult,
} from '../schemas/continuity.js';

/** Where records are submitted; it also takes their own media type (B2, C-B2; parser in app.ts). */
export const CONTINUITY_RECORDS_URL = '/v1/continuity/records';

/** The projector's writes and refusals, counted in `baton_continuity_records_*_total{via="projector"}`. */
export function continuityCounters(metrics: ServerDeps['metrics']): ProjectionObserver {
  return {
    written: (t) => metrics.countContinuityWritten(t, 'projector'),
    refused: (code) => metrics.countContinuityRefused(code, 'projector'),
  };
}

/** A submission: every refusal (reader, signature, conflict) is counted by its code, then answered. */
async function counted<T extends { status: string; record: ObservationRecord }>(
  deps: ServerDeps,
  fn: () => Promise<T>,
): Promise<T> {
  try {
    const r = await fn();
    if (r.status === 'created') deps.metrics.countContinuityWritten(r.record.event_type, 'submit');
    return r;
  } catch (error) {
    if (isBatonError(error)) deps.metrics.countContinuityRefused(error.code, 'submit');
    throw error;
  }
}

function store(deps: ServerDeps): ContinuityStore {
  if (deps.continuity === undefined) {
    throw new BatonError('unavailable', 'continuity records need the domain signing key (serve passes it)');
  }
  return deps.continuity;
}

const q = (input: HandlerInput, name: string): string | undefined => input.query[name];

function ficArgs(input: HandlerInput) {
  const sample = q(input, 'sample');
  if ((sample === undefined) !== (q(input, 'seed') === undefined)) {
    throw new BatonError('input_invalid', 'sample and seed go together', { path: '$.sample' });
  }
  const from = q(input, 'from');
  const to = q(input, 'to');
  return {
    ...(q(input, 'lineage') !== undefined && { lineage: q(input, 'lineage') }),
    ...(from !== undefined && { from: parseRfc3339(from, '$.from') }),
    ...(to !== undefined && { to: parseRfc3339(to, '$.to') }),
    ...(sample !== undefined && { sample: { size: Number(sample), seed: q(input, 'seed') ?? '' } }),
  };
}

export function continuityRoutes(deps: ServerDeps): RouteSpec[] {
  return [
    {
      method: 'POST',
      url: CONTINUITY_RECORDS_URL,
      operationId: 'submitContinuityRecord',
      summary:
        'Store a continuity observation record (unsigned under the local producer, or signed by a pinned producer key)',
      tag: 'continuity',
      roles: ['operator', 'admin'],
      // B2, C-B2: the binding's own media type, beside application/json.
      alsoConsumes: [OBSERVATION_MEDIA_TYPE],
      // B3.1 pass 1: the record's bytes are read by the record reader itself, as `baton observe
      // validate` reads them, so a duplicate member or a lone surrogate is `observation_record_invalid`
      // rule `bytes` (docs/observations.md) and counted as a refused submission, not a bare `json_*`.
      readsBodyBytes: true,
      schema: { body: recordBody, response: { 200: submitResult, 201: submitResult } },
      handler: async (input) => {
        const r = await counted(deps, async () => {
          // The strict reader first (B3.1); the store authenticates the producer (signature, pin).
          // The server's body limit already bounded the bytes (413 before this runs).
          const read = readRecord(input.body as Buffer, { maxBytes: Infinity });
          const stored = await timed(deps, 'continuity_submit', () =>
            store(deps).submit(read.record, actorOf(tokenOf(input))),
          );
          return { ...stored, record: read.record, read };
        });
        const body = {
          status: r.status,
          record: r.stored,
          unapprovedLocators: r.read.unapprovedLocators,
          uninterpreted: r.read.uninterpreted,
        };
        return { status: r.status === 'created' ? 201 : 200, body };
      },
    },
    {
      method: 'GET',
      url: '/v1/continuity/records',
      operationId: 'getContinuityRecord',
      summary: 'A stored record and the corrections appended after it',
      tag: 'continuity',
      roles: ['operator', 'admin'],
      schema: { querystring: recordQuery, response: { 200: recordChain } },
      handler: async (input) => {
        await store(deps).project('system:observations', undefined, { incremental: true });
        const found = await store(deps).get(q(input, 'producer') ?? '', q(input, 'id') ?? '');
        if (found === undefined) throw new BatonError('observation_record_not_found', 'no such record');
        return { body: found };
      },
    },
    {
      method: 'GET',
      url: '/v1/continuity/metrics/fic',
      operationId: 'continuityFic',
      summary: 'FIC_obs over entered occurrences in a window (all, or a seeded sample)',
      tag: 'continuity',
      roles: ['operator', 'admin'],
      schema: { querystring: ficQuery, response: { 200: ficResult } },
      handler: async (input) => ({ body: await store(deps).fic(ficArgs(input)) }),
    },
    {
      method: 'GET',
      url: '/v1/continuity/metrics/cif',
      operationId: 'continuityCif',
      summary:
        'CIF over stored records under a measurement profile (never an authorization); every record re-derived unless verify=incremental',
      tag: 'continuity',
      roles: ['operator', 'admin'],
      schema: { querystring: cifQuery, response: { 200: cifResult } },
      handler: async (input) => {
        // By default every record is re-derived from the log (as `baton report`), so every MATCH
        // counted comes from chains read now. `?verify=incremental` re-derives only lineages with a
        // new takeover (and every barrier record), at a cost that stays flat as the log grows: the
        // handoff records of a lineage it skipped were not re-verified now (an evidence row altered
        // since goes unseen), so they count UNKNOWN and are listed in `not_reverified` (OBS-13 ¶26:
        // stale or unverifiable evidence is never MATCH). A conflict either finds is recorded
        // (cop_conflicts), and this and every later answer counts it UNKNOWN (B3.2, OBS-13).
        const full = q(input, 'verify') !== 'incremental';
        const { conflicts, notRederived } = await store(deps).project('system:observations', undefined, {
          incremental: !full,
        });
        const profile = q(input, 'profile');
        return {
          body: await store(deps).cif({ ...(profile !== undefined && { profile }), conflicts, notRederived }),
        };
      },
    },
    {
      method: 'GET',
      url: '/v1/continuity/coverage',
      operationId: 'continuityCoverage',
      summary: 'The continuity report: records, FIC_obs, CIF, event surfaces, blind spots',
      tag: 'continuity',
      roles: ['operator', 'admin'],
      schema: { response: { 200: coverageReport } },
      handler: async () => ({ body: await store(deps).report() }),
    },
    {
      method: 'POST',
      url: '/v1/continuity/profiles',
      operationId: 'registerMeasurementProfile',
      summary: 'Pin a baton.measurement-profile/1 document by digest',
      tag: 'continuity',
      roles: ['admin'],
      schema: { body: anyObject, response: { 200: profileResult, 201: profileResult } },
      handler: async (input) => {
        const r = await store(deps).registerProfile(bodyObject(input));
        const body = { id: r.profile.id, version: r.profile.version, digest: r.digest, status: r.status };
        return { status: r.status === 'created' ? 201 : 200, body };
      },
    },
  ];
}
