/**
 * The Restate server from the `@restatedev/restate-server` package, on loopback ports of its own
 * and a fresh data folder, for the example and the peer bench. Skips (with the reason) where the
 * binary is not installed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export interface RestateServer {
  readonly ingress: string;
  readonly admin: string;
  /** The restate-server process (for the peer bench's CPU figures). */
  readonly pid: number | undefined;
  stop(): Promise<void>;
}

/** The restate-server binary, or undefined when the package (or its platform binary) is missing. */
export function restateBinary(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    const pkg = require.resolve(
      `@restatedev/restate-server-${process.platform}-${process.arch === 'x64' ? 'x64' : process.arch}/package.json`,
    );
    const bin = join(dirname(pkg), 'bin', 'restate-server');
    return existsSync(bin) ? bin : undefined;
  } catch {
    return undefined;
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

async function waitHealthy(
  url: string,
  child: ChildProcess,
  log: () => string,
  deadlineMs: number,
): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`restate-server exited (${child.exitCode}):\n${log()}`);
    const ok = await fetch(url, { signal: AbortSignal.timeout(1000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`restate-server was not healthy within ${deadlineMs} ms:\n${log()}`);
}

export async function startRestateServer(
  binary: string,
  baseDir: string,
  deadlineMs = 60_000,
): Promise<RestateServer> {
  const [ingress, admin, node] = [await freePort(), await freePort(), await freePort()];
  const child = spawn(binary, ['--no-logo'], {
    env: {
      ...process.env,
      RESTATE_BASE_DIR: baseDir,
      RESTATE_LISTEN_MODE: 'tcp',
      RESTATE_BIND_ADDRESS: `127.0.0.1:${node}`,
      RESTATE_ADVERTISED_ADDRESS: `http://127.0.0.1:${node}`,
      RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingress}`,
      RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${admin}`,
      // Retry a failed invocation soon, so the example does not wait out the default backoff.
      RESTATE_DEFAULT_RETRY_POLICY__INITIAL_INTERVAL: '100ms',
      RESTATE_DEFAULT_RETRY_POLICY__MAX_INTERVAL: '1s',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const keep = (c: Buffer): void => {
    log = (log + c.toString('utf8')).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const server = {
    ingress: `http://127.0.0.1:${ingress}`,
    admin: `http://127.0.0.1:${admin}`,
    pid: child.pid,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }),
  };
  await waitHealthy(`${server.admin}/health`, child, () => log, deadlineMs);
  await waitHealthy(`${server.ingress}/restate/health`, child, () => log, deadlineMs);
  return server;
}
