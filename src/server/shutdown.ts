/**
 * Graceful shutdown of a listening server (docs/operations.md, "Shutdown"): stop accepting, let
 * every request in flight finish and answer, and close keep-alive sockets as they fall idle. Past
 * the deadline, or when `force` resolves (a second signal), the remaining sockets are destroyed:
 * their requests get no answer, and their transactions, which are atomic, commit or roll back whole.
 */
import type { FastifyInstance } from 'fastify';

export type DrainResult =
  { readonly drained: true } | { readonly drained: false; readonly reason: 'deadline' | 'forced' };

/** How often sockets that finished their last answer after close() began are reaped. */
const IDLE_SWEEP_MS = 50;

export async function drain(
  app: FastifyInstance,
  timeoutMs: number,
  force?: Promise<unknown>,
): Promise<DrainResult> {
  let result: DrainResult = { drained: true };
  const forceClose = (reason: 'deadline' | 'forced'): void => {
    if (!result.drained) return;
    result = { drained: false, reason };
    app.server.closeAllConnections();
  };
  const deadline = setTimeout(() => forceClose('deadline'), timeoutMs);
  const sweep = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS);
  void force?.then(() => forceClose('forced'));
  try {
    await app.close();
  } finally {
    clearTimeout(deadline);
    clearInterval(sweep);
  }
  return result;
}
