/**
 * How every sandbox answer leaves: serialized once, signed over `${METHOD} ${path}\n${body}`, and
 * passed through the request's transport faults (docs/sandbox.md "Faults").
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { formatRfc3339 } from '../../core/time.js';
import type { Fault } from './faults.js';
import { signatureHeaders } from './keys.js';
import type { JsonRecord } from './model.js';
import { sandboxSignedString } from './signature.js';
import type { SandboxState } from './state.js';

export interface Answer {
  status: number;
  body: JsonRecord | string;
  headers?: Record<string, string>;
}

const has = (faults: readonly Fault[], name: Fault['name']): boolean => faults.some((f) => f.name === name);

/** A signed error body; `extra` carries the non-secret facts a caller needs to interpret it. */
export function errorAnswer(
  state: SandboxState,
  status: number,
  error: string,
  extra: JsonRecord = {},
): Answer {
  return { status, body: { error, ...extra, observed_at: formatRfc3339(state.now()) } };
}

function claimOtherAccount(body: JsonRecord | string, other: string): JsonRecord | string {
  const object = (typeof body === 'string' ? JSON.parse(body) : body) as JsonRecord;
  return Object.hasOwn(object, 'account') ? { ...object, account: other } : object;
}

export function send(
  state: SandboxState,
  request: FastifyRequest,
  reply: FastifyReply,
  answer: Answer,
  faults: readonly Fault[] = [],
): FastifyReply {
  if (has(faults, 'drop_response_after_apply')) {
    // The work is done; the caller never hears about it (AOC-CASE-003's ambiguity, made real).
    reply.hijack();
    request.raw.socket.destroy();
    return reply;
  }
  let { status, body } = answer;
  if (has(faults, 'error_500_after_apply')) ({ status, body } = errorAnswer(state, 500, 'internal_error'));
  if (has(faults, 'other_account')) body = claimOtherAccount(body, state.options.otherAccount);
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const mode = has(faults, 'unsigned') ? 'unsigned' : has(faults, 'bad_signature') ? 'bad' : 'signed';
  const signed = sandboxSignedString({ method: request.method, path: request.url, body: text });
  return reply
    .code(status)
    .headers({ ...answer.headers, ...signatureHeaders(state.options.keys, signed, state.now(), mode) })
    .type('application/json')
    .send(text);
}
