/**
 * Provider answers reported over HTTP. The occurrences service trusts an observation's
 * `authentication` verdict only from Baton's own status-source layer (src/occurrences/
 * inputs-observe.ts, AOC-REQ-009), and a remote executor or operator is not that layer. So what
 * arrives here is recorded as evidence with `authentication.verified = false`: it is kept, shown
 * and counted as missing knowledge (`unauthenticated`), and never moves outcome or effect.
 * A body that claims `verified: true` is refused rather than silently downgraded.
 * Authenticated knowledge comes from `reconcile`: the server itself asks the occurrence's pinned
 * status sources through src/providers' trusted layer (one pass, evidence only, never an entry).
 */
import { BatonError } from '../../core/errors.js';
import {
  MISSING_KNOWLEDGE_REASONS,
  type AcknowledgementInput,
  type ObservationInput,
  type OccurrenceView,
} from '../../occurrences/index.js';
import { reconcileOccurrence } from '../../providers/index.js';
import { principalActor } from '../auth.js';
import {
  bodyObject,
  executorCredential,
  param,
  timed,
  type HandlerInput,
  type RouteSpec,
  type ServerDeps,
} from '../route.js';
import { array, count, idParams, nullable, object, oneOf, type Schema } from '../schemas/common.js';
import { acknowledgementBody, emptyBody, observationBody } from '../schemas/inputs.js';
import { observeResult, occurrence } from '../schemas/records.js';
import { checkVisible } from './occurrences.js';

export function unauthenticatedReport(input: HandlerInput, occurrenceId: string): Record<string, unknown> {
  const { authentication, occurrenceId: named, ...rest } = bodyObject(input);
  // The SDK's acknowledgement carries the id; it must name the occurrence of the path.
  if (named !== undefined && named !== occurrenceId) {
    throw new BatonError('input_invalid', '$.occurrenceId differs from the occurrence in the path', {
      path: '$.occurrenceId',
    });
  }
  if ((authentication as { verified?: unknown } | undefined)?.verified === true) {
    throw new BatonError(
      'forbidden',
      'only Baton’s status-source layer may authenticate a provider answer; post it with verified: false',
    );
  }
  return { ...rest, occurrenceId, authentication: { verified: false } };
}

/** The occurrence as this executor may see it, and the executor's evidence name. */
export async function executorView(
  deps: ServerDeps,
  id: string,
  credential: string,
): Promise<{ occurrence: OccurrenceView; requestedBy: string }> {
  const seen = await timed(deps, 'get_occurrence', () => deps.service.getOccurrenceViewAs(id, credential));
  const { lineage, generation } = seen.caller;
  const who = { kind: 'executor', role: 'executor', lineage, generation, credential } as const;
  return { occurrence: seen.occurrence, requestedBy: principalActor(who) };
}

const ids: Schema = array({ type: 'string' });
export const reconcileResult = object({
  occurrence,
  report: object({
    passes: count,
    visited: count,
    observations: count,
    effective: count,
    resolved: ids,
    unresolved: ids,
    byReason: { type: 'object', additionalProperties: count },
  }),
  missingKnowledge: nullable(oneOf(MISSING_KNOWLEDGE_REASONS)),
});

export function observationRoutes(deps: ServerDeps): RouteSpec[] {
  const svc = deps.service;
  return [
    {
      method: 'POST',
      url: '/v1/occurrences/:id/acknowledgements',
      operationId: 'recordAcknowledgement',
      summary: 'The provider’s answer to the entry call, recorded as unauthenticated evidence',
      tag: 'observations',
      roles: ['executor'],
      // The credential, the visibility rule and the actor are decided in the command's own
      // transaction (issue 16 §1).
      authenticatesExecutor: true,
      schema: { params: idParams, body: acknowledgementBody, response: { 200: observeResult } },
      handler: async (input) => {
        const id = param(input, 'id');
        const ack = unauthenticatedReport(input, id) as unknown as AcknowledgementInput;
        const credential = executorCredential(input);
        const r = await timed(deps, 'acknowledge', () => svc.acknowledgeAs(ack, credential));
        deps.metrics.countAcknowledgementDropped(r.notRecorded);
        return { body: r };
      },
    },
    {
      method: 'POST',
      url: '/v1/occurrences/:id/observations',
      operationId: 'recordObservation',
      summary: 'A status observation, recorded as unauthenticated evidence',
      tag: 'observations',
      roles: ['operator', 'executor'],
      schema: { params: idParams, body: observationBody, response: { 200: observeResult } },
      handler: async (input) => {
        const id = param(input, 'id');
        await checkVisible(deps, input, id);
        const obs = unauthenticatedReport(input, id) as unknown as ObservationInput;
        if (input.principal === undefined)
          throw new BatonError('unauthenticated', 'a bearer token is required');
        const actor = principalActor(input.principal);
        return { body: await timed(deps, 'observe', () => svc.observe(obs, actor)) };
      },
    },
    {
      method: 'POST',
      url: '/v1/occurrences/:id/reconcile',
      operationId: 'reconcileOccurrence',
      summary: 'Ask the occurrence’s pinned status sources now and record what they authenticate',
      tag: 'observations',
      roles: ['operator', 'executor'],
      // An executor's credential is looked up with the occurrence, in one snapshot (issue 16 §1).
      authenticatesExecutor: true,
      schema: { params: idParams, body: emptyBody, response: { 200: reconcileResult } },
      handler: async (input) => {
        const id = param(input, 'id');
        const p = input.principal;
        if (p === undefined) throw new BatonError('unauthenticated', 'a bearer token is required');
        // The observations it records name who asked (an operator or the executor itself).
        const { occurrence, requestedBy } =
          p.kind === 'executor-bearer'
            ? await executorView(deps, id, p.credential)
            : { occurrence: await checkVisible(deps, input, id), requestedBy: principalActor(p) };
        return {
          body: await timed(deps, 'reconcile', () =>
            reconcileOccurrence(svc, deps.sources, occurrence, requestedBy, (why) =>
              deps.metrics.countReconcileDropped(why),
            ),
          ),
        };
      },
    },
  ];
}
