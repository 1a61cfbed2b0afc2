/**
 * The SDK's default wire (issue 16 §5): node:http / node:https on keep-alive Agent pools, one per
 * origin, instead of the global fetch — about a millisecond less client CPU per call and no new
 * connection per call. Idle sockets are unref'd by the Agent (they never keep a worker alive) and
 * closed after IDLE_MS, below Node's default server keep-alive of 5 s, so a pooled socket is not
 * reused just as the server closes it. NOTHING here retries: a socket that fails mid-call is a lost
 * answer for the caller to judge (docs/client.md "Retry safety"), exactly as with fetch.
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** Free pooled sockets are closed after this long. */
const IDLE_MS = 4_000;

const pools = new Map<string, HttpAgent>();

function pool(url: URL): HttpAgent {
  let agent = pools.get(url.origin);
  if (agent === undefined) {
    const options = { keepAlive: true, timeout: IDLE_MS, scheduling: 'lifo' as const };
    agent = url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
    pools.set(url.origin, agent);
  }
  return agent;
}

export interface WireRequest {
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body: string | undefined;
  readonly signal: AbortSignal;
  readonly maxBytes: number;
}

export interface WireAnswer {
  readonly status: number;
  readonly bytes: Uint8Array;
  /** Set when the caller's fetch followed a redirect despite `redirect: 'manual'` (never here). */
  readonly redirected?: true;
}

/** One request on the origin's pool; rejects on any transport failure, on abort, or past maxBytes. */
export function pooledRequest(url: URL, r: WireRequest): Promise<WireAnswer> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const headers = { ...r.headers };
  if (r.body !== undefined) headers['content-length'] = String(Buffer.byteLength(r.body));
  return new Promise((resolve, reject) => {
    const req = send(url, { method: r.method, headers, agent: pool(url), signal: r.signal }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > r.maxBytes) req.destroy(new Error('answer too large'));
        else chunks.push(chunk);
      });
      res.on('end', () => {
        if (!res.complete) return reject(new Error('answer cut off'));
        resolve({ status: res.statusCode ?? 0, bytes: new Uint8Array(Buffer.concat(chunks)) });
      });
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('answer aborted')));
    });
    req.on('error', reject);
    req.end(r.body);
  });
}
