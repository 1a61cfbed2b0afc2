/**
 * A server that listens before it is ready (`baton serve --config` binds its port first, so a
 * server that cannot listen has applied nothing): until the returned function is called, every
 * request but the liveness probe `/healthz` is answered `503 unavailable`, saying why, and never
 * reaches a route.
 */
import type { FastifyInstance } from 'fastify';
import { BatonError } from '../core/errors.js';

export function answerStartingUntil(app: FastifyInstance, why: string): () => void {
  let starting = true;
  app.addHook('onRequest', (request, _reply, done) => {
    if (starting && request.url.split('?', 1)[0] !== '/healthz')
      done(new BatonError('unavailable', `the server is starting: ${why}`));
    else done();
  });
  return () => {
    starting = false;
  };
}
