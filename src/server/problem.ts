/**
 * RFC 9457 problem details for every error the API returns (DESIGN.md §8, docs/api.md "Errors").
 * The `code` is the stable BatonError code and `status` its HTTP status. Anything that is not a
 * BatonError becomes one first: Fastify's own 4xx errors map to the nearest code, and an unknown
 * failure is `internal` with a fixed detail, so no stack, query or body ever reaches a client.
 */
import { BatonError, isBatonError, type BatonErrorCode } from '../core/errors.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: BatonErrorCode;
  readonly retryable: boolean;
  readonly details?: Readonly<Record<string, unknown>>;
}

export function problemType(code: string): string {
  return `urn:baton:problem:${code}`;
}

/** A title that is the same for every occurrence of the code (RFC 9457 §3.1.3). */
export function problemTitle(code: string): string {
  const words = code.replace(/^ERR_/, '').toLowerCase().replaceAll('_', ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

interface FastifyishError {
  readonly statusCode?: number;
  readonly code?: string;
  readonly validation?: unknown;
  readonly validationContext?: string;
  readonly message?: string;
}

const BY_STATUS: Readonly<Record<number, BatonErrorCode>> = {
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  408: 'request_timeout',
  413: 'json_too_large',
  414: 'uri_too_long',
  415: 'media_type_unsupported',
  431: 'headers_too_large',
};

/** Turn whatever was thrown into a BatonError whose message is safe to show. */
export function toBatonError(error: unknown): BatonError {
  if (isBatonError(error)) return error;
  const e = (typeof error === 'object' && error !== null ? error : {}) as FastifyishError;
  const status = e.statusCode;
  if (e.validation !== undefined) {
    // Ajv messages name the member and the rule, never the value.
    return new BatonError('input_invalid', e.message ?? 'the request does not match its schema', {
      in: e.validationContext ?? 'request',
    });
  }
  if (status !== undefined && status >= 400 && status < 500) {
    const code = BY_STATUS[status] ?? 'input_invalid';
    // No `details.reason`: Fastify's own error names are no stable contract; the code is.
    return new BatonError(code, safeFastifyMessage(e));
  }
  return new BatonError('internal', 'internal error');
}

/** Fastify's client-error messages describe the request's framing, not its content. */
function safeFastifyMessage(e: FastifyishError): string {
  if (typeof e.code === 'string' && e.code.startsWith('FST_') && typeof e.message === 'string') {
    return e.message.slice(0, 200);
  }
  return 'the request was refused';
}

export function toProblem(error: BatonError): Problem {
  const details = Object.keys(error.details).length > 0 ? { details: error.details } : {};
  return {
    type: problemType(error.code),
    title: problemTitle(error.code),
    status: error.status,
    detail: error.message,
    code: error.code,
    retryable: error.retryable,
    ...details,
  };
}

interface SchemaIssue {
  readonly keyword: string;
  readonly instancePath: string;
  readonly params: Record<string, unknown>;
  readonly message?: string;
}

/**
 * Fastify's `schemaErrorFormatter`: a schema refusal as `input_invalid`, naming where and which
 * rule (and an unexpected member's name), never the offending value.
 */
export function schemaError(errors: readonly SchemaIssue[], dataVar: string): BatonError {
  const first = errors[0];
  const path = `${dataVar}${first?.instancePath ?? ''}`;
  const extra = first?.params['additionalProperty'];
  const why =
    typeof extra === 'string'
      ? `member "${extra.slice(0, 64)}" is not allowed`
      : (first?.message ?? 'does not match its schema');
  return new BatonError('input_invalid', `${path}: ${why}`, { in: dataVar, path });
}
