/** `GET /v1/events`: server-sent events on new evidence (src/server/events.ts, docs/api.md "Events"). */
import { parseRfc3339 } from '../../core/time.js';
import { BatonError } from '../../core/errors.js';
import { evidenceHistogram, recentEvidence } from '../../store/evidence-recent.js';
import type { EventStreams } from '../events.js';
import { timed, type RouteSpec, type ServerDeps } from '../route.js';
import { array, count, epochMs, evidenceEvent, name, object, text } from '../schemas/common.js';

const recentQuery = object(
  { type: name, limit: { type: 'string', pattern: '^[1-9][0-9]?$', description: '1..99, default 10' } },
  ['limit'],
);

const histogramQuery = object(
  {
    type: name,
    from: { type: 'string', maxLength: 64, description: 'RFC 3339, inclusive' },
    to: { type: 'string', maxLength: 64, description: 'RFC 3339, exclusive' },
    buckets: {
      type: 'string',
      pattern: '^[1-9][0-9]?$',
      description: '1..99 and at most the milliseconds of [from, to), default 24',
    },
  },
  ['buckets'],
);

/** Evidence by type (the overview's recent takeovers and entries over time). */
export function evidenceByTypeRoutes(deps: ServerDeps): RouteSpec[] {
  return [
    {
      method: 'GET',
      url: '/v1/evidence/recent',
      operationId: 'recentEvidence',
      summary: 'The latest evidence events of one type, newest first (e.g. generation_advanced)',
      tag: 'evidence',
      roles: ['operator'],
      schema: { querystring: recentQuery, response: { 200: object({ events: array(evidenceEvent) }) } },
      handler: async (input) => {
        const type = input.query['type'] ?? '';
        const limit = Number(input.query['limit'] ?? '10');
        const events = await timed(deps, 'recent_evidence', () =>
          deps.engine.read((ex) => recentEvidence(ex, type, limit)),
        );
        return { body: { events } };
      },
    },
    {
      method: 'GET',
      url: '/v1/evidence/histogram',
      operationId: 'evidenceHistogram',
      summary: 'How many evidence events of one type fell in each equal slice of [from, to)',
      tag: 'evidence',
      roles: ['operator'],
      schema: {
        querystring: histogramQuery,
        response: {
          200: object({ type: { type: 'string' }, buckets: array(object({ from: epochMs, count })) }),
        },
      },
      handler: async (input) => {
        const type = input.query['type'] ?? '';
        const from = parseRfc3339(input.query['from'] ?? '', '$.from');
        const to = parseRfc3339(input.query['to'] ?? '', '$.to');
        if (to <= from) throw new BatonError('input_invalid', 'to must be after from', { path: '$.to' });
        const buckets = Number(input.query['buckets'] ?? '24');
        // A slice is at least 1 ms: more slices than milliseconds in [from, to) cannot tile it.
        if (buckets > to - from)
          throw new BatonError('input_invalid', 'buckets must be at most the milliseconds from from to to', {
            path: '$.buckets',
          });
        const body = await timed(deps, 'evidence_histogram', () =>
          deps.engine.read((ex) => evidenceHistogram(ex, { type, from, to, buckets })),
        );
        return { body: { type, buckets: body } };
      },
    },
  ];
}

const eventsQuery = object(
  {
    after: { type: 'string', pattern: '^(0|[1-9][0-9]{0,15})$', description: 'start after this seq' },
    subject: { ...text, description: 'only this subject (occurrence:<id>, lineage:<id>, …)' },
  },
  ['after', 'subject'],
);

export function eventRoutes(streams: EventStreams): RouteSpec[] {
  return [
    {
      method: 'GET',
      url: '/v1/events',
      operationId: 'events',
      summary:
        'Server-sent events: one `evidence` event (seq, subject, type, at, actor) per new evidence row',
      tag: 'evidence',
      roles: ['operator'],
      produces: 'text/event-stream',
      streams: true,
      schema: {
        querystring: eventsQuery,
        response: { 200: { type: 'string', description: 'text/event-stream; `id` is the seq' } },
      },
      handler: async (input) => {
        const after = resumeAfter(input.query['after'], input.headers?.['last-event-id']);
        const subject = input.query['subject'];
        const body = await streams.open({
          ...(after !== undefined && { after }),
          ...(subject !== undefined && { subject }),
          ...(input.closed !== undefined && { closed: input.closed }),
          ...(input.reauthenticate !== undefined && { reauthenticate: input.reauthenticate }),
        });
        return { headers: { 'cache-control': 'no-store', 'x-accel-buffering': 'no' }, body };
      },
    },
  ];
}

const SEQ = /^(0|[1-9][0-9]{0,15})$/;

/**
 * Where a stream starts: after `?after=SEQ`, or after the `Last-Event-ID` an EventSource sends
 * when it reconnects (the `id` of the last event it read: the seq), whichever is later — so a
 * reconnect does not skip what was written while it was away (WHATWG HTML, server-sent events).
 * Neither: at the head. A Last-Event-ID that is no seq is refused, never read as "from the head".
 */
export function resumeAfter(
  after: string | undefined,
  lastEventId: string | string[] | undefined,
): number | undefined {
  if (Array.isArray(lastEventId) || (lastEventId !== undefined && !SEQ.test(lastEventId)))
    throw new BatonError('input_invalid', 'Last-Event-ID: is not the id of an event this stream sent', {
      path: 'Last-Event-ID',
    });
  const seqs = [after, lastEventId].filter((v) => v !== undefined).map(Number);
  return seqs.length === 0 ? undefined : Math.max(...seqs);
}
