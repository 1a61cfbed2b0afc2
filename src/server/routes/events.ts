/** `GET /v1/events`: server-sent events on new evidence (src/server/events.ts, docs/api.md "Events"). */
import type { EventStreams } from '../events.js';
import type { RouteSpec } from '../route.js';
import { object, text } from '../schemas/common.js';

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
        const after = input.query['after'];
        const subject = input.query['subject'];
        const body = await streams.open({
          ...(after !== undefined && { after: Number(after) }),
          ...(subject !== undefined && { subject }),
          ...(input.closed !== undefined && { closed: input.closed }),
        });
        return { headers: { 'cache-control': 'no-store', 'x-accel-buffering': 'no' }, body };
      },
    },
  ];
}
