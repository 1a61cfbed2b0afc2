/**
 * The HTTP ceilings: the peer job with the same two calls over HTTP, each call's work done by the
 * least code that does it, behind a bare node:http server in a child process
 * (http-ceiling-serve.ts), the same sandbox provider and payment call, the SDK's own keep-alive
 * wire (src/client/http-pool.ts) from this process.
 * - On SQLite (http-ceiling-server.ts): plain SQL with the floor's group commit. It stands beside
 *   issue 16's "p99 per Baton call ≤ 20 ms at 16 HTTP workers on SQLite": what its calls' p99 is,
 *   no server doing these two calls' SQL over HTTP on this machine does better.
 * - On PostgreSQL (http-folded-server.ts): the folded + status query ceiling's two statements and
 *   status query (folded-status.ts). It stands beside "Baton over HTTP on PostgreSQL ≥ 1.0× DBOS":
 *   the same job as Baton over HTTP, with the HTTP hop Baton's in-process ceiling leaves out.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pooledRequest } from '../../src/client/http-pool.js';
import type { ProviderProfile } from '../../src/occurrences/index.js';
import { childCpuMs } from './procs.js';
import { pay, type CallTimes, type Provider, type System } from './systems.js';

export const HTTP_CEILING = 'ceiling: plain SQL SQLite over HTTP';
export const HTTP_FOLDED_STATUS = 'ceiling: PostgreSQL folded + status query over HTTP';

function start(script: string, args: readonly string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [join(import.meta.dirname, script), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  return new Promise<{ child: ChildProcess; port: number }>((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`the ceiling server exited with ${String(code)}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const port = /ceiling listening on (\d+)/.exec(out)?.[1];
      if (port === undefined) return;
      child.removeAllListeners('exit');
      resolve({ child, port: Number(port) });
    });
  });
}

async function post(base: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const text = JSON.stringify(body);
  const answer = await pooledRequest(new URL(path, base), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: text,
    signal: AbortSignal.timeout(30_000),
    maxBytes: 1 << 20,
  });
  const doc = JSON.parse(Buffer.from(answer.bytes).toString('utf8')) as Record<string, unknown>;
  if (answer.status !== 200) throw new Error(`the ceiling server answered ${answer.status}`);
  return doc;
}

/**
 * A ceiling over HTTP as a system: `/ce`, the payment under the key `keyOf` reads from the
 * answer, `/as`; each call timed as Baton's are.
 */
function overHttp(
  name: string,
  p: Provider,
  started: { child: ChildProcess; port: number },
  keyOf: (ce: Record<string, unknown>, n: number) => string,
  cleanup: () => void = () => undefined,
): System {
  const { child, port } = started;
  const base = `http://127.0.0.1:${port}`;
  const calls: CallTimes = new Map([
    ['create-and-enter', []],
    ['acknowledge-and-settle', []],
  ]);
  const timed = async <T>(call: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    const out = await fn();
    calls.get(call)?.push(performance.now() - t0);
    return out;
  };
  const job = async (w: number, n: number): Promise<void> => {
    const request = { amount: 100, currency: 'eur', payee: 'acme-supplies', invoice: `peer-${n}` };
    const ce = await timed('create-and-enter', () =>
      post(base, `/ce?w=${w}&n=${n}`, { creationKey: `c-${n}`, request }),
    );
    await pay(p, keyOf(ce, n), n);
    await timed('acknowledge-and-settle', () =>
      post(base, `/as?w=${w}&n=${n}`, { httpStatus: 201, body: { id: `pay_${n}` } }),
    );
  };
  const close = () =>
    new Promise<void>((done) => {
      const finish = () => {
        cleanup();
        done();
      };
      if (child.exitCode !== null) return finish();
      child.once('exit', finish);
      child.kill('SIGTERM');
    });
  return { name, job, calls, childCpuMs: () => childCpuMs(child.pid), close };
}

/** The SQLite HTTP ceiling on the file `db`. */
export async function httpCeiling(p: Provider, db: string, workers: number): Promise<System> {
  const started = await start('http-ceiling-server.js', [db, p.sandbox.url, String(workers)], {});
  return overHttp(HTTP_CEILING, p, started, (_ce, n) => `ceiling-http-${n}`);
}

/**
 * The PostgreSQL HTTP ceiling on the (empty) database at `url`, settling from the status source of
 * `profile`, the deployed profile the Baton systems of the same run register.
 */
export async function httpFoldedStatusCeiling(
  p: Provider,
  profile: ProviderProfile,
  url: string,
  workers: number,
): Promise<System> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-http-folded-'));
  const file = join(dir, 'profile.json');
  writeFileSync(file, JSON.stringify(profile));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  try {
    // The URL and the key by environment, not argv: neither shows in a process listing.
    const started = await start('http-folded-server.js', [file, String(workers)], {
      PEER_DATABASE_URL: url,
      PEER_SANDBOX_HMAC: p.hmac.toString('hex'),
    });
    return overHttp(HTTP_FOLDED_STATUS, p, started, (ce) => nativeKeyOf(ce), cleanup);
  } catch (error) {
    cleanup();
    throw error;
  }
}

function nativeKeyOf(ce: Record<string, unknown>): string {
  const ticket = ce['ticket'] as { nativeKey?: unknown } | undefined;
  if (typeof ticket?.nativeKey !== 'string') throw new Error('the ceiling entered no native key');
  return ticket.nativeKey;
}
