/**
 * The `fetch` the gateway gives the SDK's Streamable HTTP client (issue 15 §7). The SDK passes ONE
 * transport-wide AbortSignal to every request, and undici's fetch adds an `abort` listener to the
 * signal it is given that only goes when the request is garbage collected: on a long-lived session
 * the shared signal collects thousands of listeners (Node's MaxListenersExceededWarning) and every
 * new one costs a walk of the list. Here each request gets its own signal that follows the
 * transport's (AbortSignal.any holds it weakly, with no listener on the transport's signal), so
 * closing the transport still aborts every request and stream in flight, and nothing accumulates.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

export function perRequestSignalFetch(base: FetchLike = fetch): FetchLike {
  return (url, init) => {
    const shared = init?.signal;
    if (shared === undefined || shared === null) return base(url, init);
    return base(url, { ...init, signal: AbortSignal.any([shared]) });
  };
}
