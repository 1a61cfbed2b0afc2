/**
 * Fastify's and Node's own refusals as RFC 9457 problems (docs/api.md "Errors"): what the router
 * refuses before any route runs (a path that does not percent-decode, a path parameter longer
 * than the router takes) and what Node's HTTP parser refuses before Fastify sees a request
 * (oversized headers, a malformed request, a timeout). None of them echoes the path or a header:
 * those may carry a secret.
 */
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { BatonError } from '../core/errors.js';
import type { Metrics } from './metrics.js';
import { PROBLEM_CONTENT_TYPE, toProblem } from './problem.js';

/**
 * The longest raw path parameter the router takes: every parameter's documented maximum is 128
 * characters (src/server/schemas/common.ts NAME), and each may arrive percent-encoded (3 bytes per
 * character), so the router never refuses a valid name; the route's schema refuses anything over
 * 128 decoded characters with `input_invalid`, and over this the router answers `uri_too_long`.
 */
export const MAX_PARAM_LENGTH = 3 * 128;

function routerError(code: string | undefined): BatonError {
  if (code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return new BatonError('uri_too_long', `a path parameter is longer than ${MAX_PARAM_LENGTH} bytes`, {
      maxParamLength: MAX_PARAM_LENGTH,
    });
  }
  if (code === 'FST_ERR_BAD_URL')
    return new BatonError('url_invalid', 'the path is not valid percent-encoding');
  return new BatonError('http_malformed', 'the request was refused by the router');
}

/** Fastify's `frameworkErrors`: the router's refusals, before any route or hook runs. */
export function frameworkErrors(
  metrics: Metrics,
): (error: { code?: string }, request: FastifyRequest, reply: FastifyReply) => void {
  return (error, _request, reply) => {
    const e = routerError(error.code);
    metrics.countRefusal(e.code);
    void reply
      .code(e.status)
      .type(PROBLEM_CONTENT_TYPE)
      .send(JSON.stringify(toProblem(e)));
  };
}

function connectionError(code: string | undefined): BatonError {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return new BatonError('headers_too_large', 'the request headers are larger than the server takes');
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new BatonError('request_timeout', 'the request did not arrive in time');
  }
  return new BatonError('http_malformed', 'the request is not well-formed HTTP/1.1');
}

/** Fastify's `clientErrorHandler`: Node's parser refused the bytes; answer and close the connection. */
export function clientErrors(metrics: Metrics): (error: Error & { code?: string }, socket: Socket) => void {
  return (error, socket) => {
    // A reset connection has nobody to answer (Node's own behaviour).
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const e = connectionError(error.code);
    metrics.countRefusal(e.code);
    const body = JSON.stringify(toProblem(e));
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${e.status} ${e.status === 431 ? 'Request Header Fields Too Large' : e.status === 408 ? 'Request Timeout' : 'Bad Request'}\r\n` +
          `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  };
}
