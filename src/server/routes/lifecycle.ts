/**
 * The two calls a guarded lifecycle needs with `perform` (issue 16 §4): create-and-enter and
 * acknowledge-and-settle. Each composes the single steps' service commands in one transaction and
 * keeps their refusals and evidence; the single-step routes stay (docs/api.md "Fewer calls").
 */
import { ERROR_CODES, errorCodeOf } from '../../core/errors.js';
import type { AcknowledgementInput, CreateAndEnterInput, NotRecorded } from '../../occurrences/index.js';
import { acknowledgeAndSettle } from '../../providers/index.js';
import { principalActor } from '../auth.js';
import {
  bodyObject,
  executorCredential,
  executorOf,
  param,
  timed,
  type RouteSpec,
  type ServerDeps,
} from '../route.js';
import { bool, idParams, nullable, object, oneOf } from '../schemas/common.js';
import { acknowledgementBody, createEnterBody } from '../schemas/inputs.js';
import { entryTicket, observeResult, occurrence } from '../schemas/records.js';
import { executorView, reconcileResult, unauthenticatedReport } from './observations.js';
import { checkVisible } from './occurrences.js';

const createEnterResult = object({ occurrence, created: bool, ticket: nullable(entryTicket) });

const settleMembers = (reconcileResult['properties'] ?? {}) as Record<string, Record<string, unknown>>;
// `errorCode`: only when a status source could not be asked (the pass ends `unavailable`); the
// failure's stable code, never its message (AOC-REQ-009: an outage and a fault look different).
const errorCode = {
  ...oneOf(Object.keys(ERROR_CODES)),
  description:
    'Present only when a status source could not be asked or its answer not recorded: that failure’s code (`internal` for a fault in Baton)',
};
const ackSettleResult = object({ ...settleMembers, acknowledgement: observeResult, errorCode }, [
  'errorCode',
]);

export function lifecycleRoutes(deps: ServerDeps): RouteSpec[] {
  const svc = deps.service;
  return [
    {
      method: 'POST',
      url: '/v1/occurrences/create-and-enter',
      operationId: 'createAndEnterOccurrence',
      summary:
        'Create, reserve and bind an occurrence and enter it, in one transaction; the answer carries the ticket',
      tag: 'occurrences',
      roles: ['executor'],
      // Authenticated and checked inside the one transaction by createIn/enterIn (issue 16 §1).
      authenticatesExecutor: true,
      schema: { body: createEnterBody, response: { 200: createEnterResult, 201: createEnterResult } },
      handler: async (input) => {
        const credential = executorCredential(input);
        const cmd = { ...bodyObject(input), credential } as unknown as CreateAndEnterInput;
        const r = await timed(deps, 'create_and_enter', () => svc.createAndEnter(cmd));
        if (r.ticket !== null) deps.metrics.countEntry();
        return { status: r.created ? 201 : 200, body: r };
      },
    },
    {
      method: 'POST',
      url: '/v1/occurrences/:id/acknowledge-and-settle',
      operationId: 'acknowledgeAndSettle',
      summary:
        'Record the provider’s answer (unauthenticated) and one pass of the pinned status sources, in one transaction',
      tag: 'observations',
      roles: ['executor'],
      // The credential is looked up with the occurrence, in one snapshot (issue 16 §1).
      authenticatesExecutor: true,
      schema: { params: idParams, body: acknowledgementBody, response: { 200: ackSettleResult } },
      handler: async (input) => {
        const id = param(input, 'id');
        const p = input.principal;
        const { occurrence, requestedBy: actor } =
          p?.kind === 'executor-bearer'
            ? await executorView(deps, id, p.credential)
            : {
                occurrence: await checkVisible(deps, input, id),
                requestedBy: principalActor(executorOf(input)),
              };
        const ack = unauthenticatedReport(input, id) as unknown as AcknowledgementInput;
        // The executor reports the answer and asks for the pass: both name it in the evidence.
        // The snapshot above decided visibility; the recording transaction authenticates the executor
        // again, so a generation retired in between is refused where the acknowledgement is written.
        const reporter = p?.kind === 'executor-bearer' ? { credential: p.credential } : undefined;
        // The answer carries the failure's code only; the log gets the error, as the error handler
        // logs a 500 (a broken store or a fault in Baton must not pass for a provider outage).
        const failed = (error: unknown): void => {
          const code = errorCodeOf(error);
          input.log.error(
            { err: error, code, occurrenceId: id },
            'acknowledge-and-settle: status pass failed',
          );
        };
        const options = {
          ackActor: actor,
          requestedBy: actor,
          known: occurrence,
          reporter,
          onError: failed,
          // A status reading that moved nothing and was not appended (ack-bound.ts) is counted.
          onNotRecorded: (why: NotRecorded) => deps.metrics.countReconcileDropped(why),
        };
        const settled = () => acknowledgeAndSettle(svc, deps.sources, ack, options);
        const r = await timed(deps, 'acknowledge_and_settle', settled);
        deps.metrics.countAcknowledgementDropped(r.acknowledgement.notRecorded);
        return { body: r };
      },
    },
  ];
}
