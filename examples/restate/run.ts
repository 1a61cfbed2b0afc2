/**
 * Baton inside a Restate service's `ctx.run` (docs/integrations.md): the same crash, twice — once
 * without Baton, once with it — and the provider's own effect counter for each. Starts the Restate
 * server from `@restatedev/restate-server` on loopback. Exits 0 only when the crash without Baton
 * paid twice and with Baton exactly once; exits 3 (with one line saying so) where the binary is
 * missing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXAMPLE_ENV } from '../support/payments.js';
import { startWorld } from '../support/world.js';
import { freePort, restateBinary, startRestateServer } from './server.js';

const SERVICE = join(import.meta.dirname, 'service.js');
const DEADLINE_MS = 60_000;

interface Service {
  readonly child: ChildProcess;
  readonly exited: Promise<NodeJS.Signals | number | null>;
  stderr(): string;
}

function startService(env: Record<string, string>): Promise<Service> {
  const child = spawn(process.execPath, [SERVICE], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => void (stderr += c.toString('utf8')));
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? code)),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the service did not start within ${DEADLINE_MS} ms:\n${stderr}`));
    }, DEADLINE_MS);
    child.stdout.on('data', (c: Buffer) => {
      if (!c.toString('utf8').includes('listening')) return;
      clearTimeout(timer);
      resolve({ child, exited, stderr: () => stderr });
    });
    void exited.then((how) => {
      clearTimeout(timer);
      reject(new Error(`the service exited (${String(how)}) before listening:\n${stderr}`));
    });
  });
}

async function post(url: string, body: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(DEADLINE_MS),
  });
  return { status: res.status, text: await res.text() };
}

async function scenario(
  binary: string,
  mode: 'with' | 'without',
  print: (l: string) => void,
): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), `baton-restate-${mode}-`));
  const world = await startWorld(dir);
  const server = await startRestateServer(binary, join(dir, 'restate'));
  const port = await freePort();
  const env = { ...world.env, BATON_EXAMPLE_MODE: mode, BATON_EXAMPLE_SERVICE_PORT: String(port) };
  let second: Service | undefined;
  try {
    const first = await startService({ ...env, [EXAMPLE_ENV.crashAfter]: 'inv-1' });
    const registered = await post(`${server.admin}/deployments`, { uri: `http://127.0.0.1:${port}` });
    if (registered.status >= 300) throw new Error(`registering the deployment failed: ${registered.text}`);
    const answer = post(`${server.ingress}/payments/payInvoice`, 'inv-1');
    const how = await first.exited;
    if (how !== 'SIGKILL')
      throw new Error(`the first service process was not killed (${String(how)}):\n${first.stderr()}`);
    print(
      `${mode} Baton: service killed (SIGKILL) inside ctx.run after the provider applied the payment; effects so far: ${world.effects()}`,
    );
    second = await startService(env);
    const result = await answer;
    if (result.status !== 200)
      throw new Error(`the invocation failed (${result.status}): ${result.text}\n${second.stderr()}`);
    print(`${mode} Baton: Restate retried the invocation and re-ran ctx.run: ${result.text}`);
    return world.effects();
  } finally {
    second?.child.kill('SIGKILL');
    await server.stop();
    await world.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runRestateExample(
  print: (l: string) => void = console.log,
): Promise<{ without: number; with: number } | undefined> {
  const binary = restateBinary();
  if (binary === undefined) {
    print('skipped: the Restate server binary (@restatedev/restate-server) is not installed');
    return undefined;
  }
  const without = await scenario(binary, 'without', print);
  const withBaton = await scenario(binary, 'with', print);
  print(`without Baton: ${without} effects, with Baton: ${withBaton} effect${withBaton === 1 ? '' : 's'}`);
  return { without, with: withBaton };
}

if (process.argv[1] === import.meta.filename) {
  runRestateExample().then(
    (r) => process.exit(r === undefined ? 3 : r.without === 2 && r.with === 1 ? 0 : 1),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
