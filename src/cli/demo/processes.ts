/**
 * Starting and killing the demo's worker processes: a real child (process.execPath running the
 * compiled worker.js found beside this file, or worker.ts through tsx when running from source),
 * its output relayed line by line, SIGKILL when it prints the marker.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { MARKER } from './shared.js';

const WORKER_TIMEOUT_MS = 60_000;

function workerArgs(): string[] {
  const js = fileURLToPath(new URL('./worker.js', import.meta.url));
  if (existsSync(js)) return [js];
  return ['--import', import.meta.resolve('tsx'), fileURLToPath(new URL('./worker.ts', import.meta.url))];
}

export interface WorkerRun {
  /** The exit code, or null when it was killed. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly killedAtMarker: boolean;
}

/**
 * Run a worker with `env`; relay its lines through `print`; SIGKILL it when it prints the marker,
 * or when `stop` aborts (the demo was interrupted: no worker outlives it on its database).
 */
export function runWorker(
  env: Record<string, string>,
  print: (line: string) => void,
  stop?: AbortSignal,
): Promise<WorkerRun> {
  const child: ChildProcess = spawn(process.execPath, workerArgs(), {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let killedAtMarker = false;
  const relay = (stream: NodeJS.ReadableStream | null): void => {
    if (stream === null) return;
    createInterface({ input: stream }).on('line', (line) => {
      if (line === MARKER) {
        killedAtMarker = child.kill('SIGKILL');
        print(`SIGKILL → worker pid ${child.pid ?? '?'}`);
      } else print(line);
    });
  };
  relay(child.stdout);
  relay(child.stderr);
  // A worker that neither finishes nor reaches its marker is a failed story, not a hung demo.
  const guard = setTimeout(() => child.kill('SIGKILL'), WORKER_TIMEOUT_MS);
  const onStop = (): void => void child.kill('SIGKILL');
  if (stop?.aborted === true) onStop();
  else stop?.addEventListener('abort', onStop, { once: true });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(guard);
      stop?.removeEventListener('abort', onStop);
      resolve({ code, signal, killedAtMarker });
    });
  });
}
