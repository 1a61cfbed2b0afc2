/**
 * The world both engine examples run in (examples/dbos, examples/restate): the sandbox payments
 * provider — whose effect counter is the oracle — and a Baton store on SQLite set up with one
 * domain, the sandbox profile and an authority budget. Worker processes reach it through the
 * environment (secrets never on a command line).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import {
  createSandboxProvider,
  deployProfile,
  loadProfile,
  sandboxDeployment,
  type SandboxProvider,
} from '../../src/providers/index.js';
import { DEMO_DOMAIN } from '../../src/cli/demo/domain.js';
import { openOccurrencesOnSqlite } from '../../src/store/index.js';
import { EXAMPLE_ENV, LINEAGE, AUTHORITY } from './payments.js';

export interface World {
  readonly sandbox: SandboxProvider;
  /** What a worker process needs, as environment variables. */
  readonly env: Record<string, string>;
  /** Payments the provider actually applied (the duplicate oracle). */
  effects(): number;
  close(): Promise<void>;
}

export async function startWorld(dir: string): Promise<World> {
  const hmacSecret = randomBytes(32);
  const sandbox = createSandboxProvider({ hmacSecret });
  await sandbox.listen(0, '127.0.0.1');
  const db = join(dir, 'baton.db');
  const opened = await openOccurrencesOnSqlite(db);
  try {
    const svc = opened.service;
    // The demo's domain (finite limits, an honest bypass disclosure) under the example's own id.
    await svc.configureDomain({ ...DEMO_DOMAIN, id: 'engine-example' });
    const p = await svc.registerProfile(
      deployProfile(loadProfile('sandbox-payments'), sandboxDeployment(sandbox)),
    );
    await svc.createAuthority({ id: AUTHORITY, unit: 'EUR-cents', total: 1_000_000 });
    return {
      sandbox,
      env: {
        [EXAMPLE_ENV.db]: db,
        [EXAMPLE_ENV.sandbox]: sandbox.url,
        [EXAMPLE_ENV.profile]: `${p.id}@${p.version}`,
        [EXAMPLE_ENV.hmacSecret]: hmacSecret.toString('base64url'),
        [EXAMPLE_ENV.lineage]: LINEAGE,
      },
      effects: () => sandbox.effects().length,
      close: async () => {
        await sandbox.close();
      },
    };
  } finally {
    await opened.close();
  }
}

export interface Exited {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Run a worker process to its end, within a deadline; on timeout it is killed and says so. */
export function runProcess(file: string, env: Record<string, string>, deadlineMs: number): Promise<Exited> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => void (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => void (stderr += c.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${file} did not finish within ${deadlineMs} ms; its stderr:\n${stderr}`));
    }, deadlineMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
