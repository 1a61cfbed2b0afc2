/**
 * The ceiling beside issue 16's "p99 per Baton call ≤ 20 ms at 16 HTTP workers on SQLite": the same
 * job with the same two calls, as plain SQL behind a bare node:http server in a child process
 * (http-ceiling-server.ts), the same group commit of the floor, the same sandbox provider and
 * payment call, the SDK's own keep-alive wire (src/client/http-pool.ts) from this process. What its
 * calls' p99 is, no server doing these two calls' SQL over HTTP on this machine does better.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { pooledRequest } from '../../src/client/http-pool.js';
import { childCpuMs } from './procs.js';
import { pay, type CallTimes, type Provider, type System } from './systems.js';

export const HTTP_CEILING = 'ceiling: plain SQL SQLite over HTTP';

function start(db: string, origin: string, workers: number): Promise<{ child: ChildProcess; port: number }> {
  const script = join(import.meta.dirname, 'http-ceiling-server.js');
  const child = spawn(process.execPath, [script, db, origin, String(workers)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
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

async function post(base: string, path: string, body: unknown): Promise<void> {
  const text = JSON.stringify(body);
  const answer = await pooledRequest(new URL(path, base), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: text,
    signal: AbortSignal.timeout(30_000),
    maxBytes: 1 << 20,
  });
  JSON.parse(Buffer.from(answer.bytes).toString('utf8'));
  if (answer.status !== 200) throw new Error(`the ceiling server answered ${answer.status}`);
}

export async function httpCeiling(p: Provider, db: string, workers: number): Promise<System> {
  const { child, port } = await start(db, p.sandbox.url, workers);
  const base = `http://127.0.0.1:${port}`;
  const calls: CallTimes = new Map([
    ['create-and-enter', []],
    ['acknowledge-and-settle', []],
  ]);
  const timed = async (call: string, fn: () => Promise<void>) => {
    const t0 = performance.now();
    await fn();
    calls.get(call)?.push(performance.now() - t0);
  };
  const job = async (w: number, n: number): Promise<void> => {
    const request = { amount: 100, currency: 'eur', payee: 'acme-supplies', invoice: `peer-${n}` };
    await timed('create-and-enter', () =>
      post(base, `/ce?w=${w}&n=${n}`, { creationKey: `c-${n}`, request }),
    );
    await pay(p, `ceiling-http-${n}`, n);
    await timed('acknowledge-and-settle', () =>
      post(base, `/as?w=${w}&n=${n}`, { httpStatus: 201, body: { id: `pay_${n}` } }),
    );
  };
  const close = () =>
    new Promise<void>((done) => {
      if (child.exitCode !== null) return done();
      child.once('exit', () => done());
      child.kill('SIGTERM');
    });
  return { name: HTTP_CEILING, job, calls, childCpuMs: () => childCpuMs(child.pid), close };
}
