/**
 * A child process a test waits on, with a deadline on every wait (issue 10, part 1): a server that
 * never gets ready, or a child that dies first, fails the test within the deadline with what the
 * child wrote on stderr, instead of leaving the test waiting forever. Used by every test that
 * spawns `baton serve`, the demo or a worker process.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createInterface } from 'node:readline';

/** Generous: the CI machine is shared, and a cold `tsx` start alone can take seconds. */
export const READY_DEADLINE_MS = 60_000;
/** The most of a child's stderr a failure message quotes (its tail, where the error usually is). */
const STDERR_TAIL = 8 * 1024;
const STDOUT_LINES = 20;

const live = new Set<ChildProcess>();
// Even if the runner dies before a test's cleanup runs, no child outlives this process.
process.once('exit', () => live.forEach((c) => c.kill('SIGKILL')));

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export class WatchedChild {
  readonly proc: ChildProcess;
  /** Every stdout line so far. */
  readonly lines: string[] = [];
  readonly exited: Promise<Exit>;
  #stderr = '';
  #cursor = 0;
  #exit: Exit | undefined;
  readonly #wakers = new Set<() => void>();

  constructor(
    readonly name: string,
    proc: ChildProcess,
  ) {
    this.proc = proc;
    live.add(proc);
    if (proc.stdout !== null) {
      createInterface({ input: proc.stdout }).on('line', (line) => {
        this.lines.push(line);
        this.#wake();
      });
    }
    proc.stderr?.on('data', (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString()).slice(-STDERR_TAIL);
    });
    this.exited = new Promise((resolve) => {
      // 'close' comes after the stdio streams end, so every stdout line has been seen by then.
      proc.once('close', (code, signal) => {
        live.delete(proc);
        this.#exit = { code, signal };
        this.#wake();
        resolve(this.#exit);
      });
      proc.once('error', (error) => {
        this.#stderr += `\n(spawn failed: ${error.message})`;
        live.delete(proc);
        this.#exit ??= { code: null, signal: null };
        this.#wake();
        resolve(this.#exit);
      });
    });
  }

  /** What the child wrote on stderr so far (its last 8 KiB). */
  stderr(): string {
    return this.#stderr;
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.#exit === undefined) this.proc.kill(signal);
  }

  /** An error naming the child, why it failed, its last stdout lines and its stderr. */
  failure(why: string): Error {
    const out = this.lines.slice(-STDOUT_LINES).join('\n');
    const err = this.#stderr.trim();
    return new Error(
      `${this.name}: ${why}\n--- stdout (last lines) ---\n${out || '(none)'}\n--- stderr ---\n${err || '(none)'}`,
    );
  }

  /**
   * The first stdout line not yet consumed for which `match` gives a value. Lines before it are
   * consumed. Fails (and kills the child) at the deadline or when the child exits first.
   */
  async waitFor<T>(
    what: string,
    match: (line: string) => T | undefined,
    deadlineMs = READY_DEADLINE_MS,
  ): Promise<T> {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      while (this.#cursor < this.lines.length) {
        const value = match(this.lines[this.#cursor++] ?? '');
        if (value !== undefined) return value;
      }
      if (this.#exit !== undefined) {
        throw this.failure(`exited (code ${this.#exit.code}, signal ${this.#exit.signal}) before ${what}`);
      }
      const left = deadline - Date.now();
      if (left <= 0 || !(await this.#changed(left))) {
        this.kill();
        throw this.failure(`no ${what} within ${deadlineMs} ms`);
      }
    }
  }

  /** The first stdout line matching `pattern`, as its match. */
  waitForLine(pattern: RegExp, what: string, deadlineMs?: number): Promise<RegExpExecArray> {
    return this.waitFor(what, (line) => pattern.exec(line) ?? undefined, deadlineMs);
  }

  /** The next stdout line not yet consumed. */
  nextLine(what: string, deadlineMs?: number): Promise<string> {
    return this.waitFor(what, (line) => line, deadlineMs);
  }

  /** The child's exit; at the deadline it is killed and this fails with its stderr. */
  async waitForExit(deadlineMs = READY_DEADLINE_MS): Promise<Exit> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), deadlineMs)));
    const exit = await Promise.race([this.exited, late]);
    clearTimeout(timer);
    if (exit !== 'late') return exit;
    this.kill();
    throw this.failure(`did not exit within ${deadlineMs} ms`);
  }

  /** Resolves true on the next line or exit, false after `ms`. */
  #changed(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.#wakers.delete(wake);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.#wakers.delete(wake);
        resolve(false);
      }, ms);
      this.#wakers.add(wake);
    });
  }

  #wake(): void {
    for (const wake of [...this.#wakers]) wake();
  }
}

export type WatchedOptions = Omit<SpawnOptions, 'stdio'> & { stdin?: boolean };

/** Spawn `command …args` with stdout and stderr piped (stdin too when asked) and watch it. */
export function spawnWatched(
  name: string,
  command: string,
  args: readonly string[],
  options: WatchedOptions = {},
): WatchedChild {
  const { stdin = false, ...rest } = options;
  const proc = spawn(command, args, { ...rest, stdio: [stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  return new WatchedChild(name, proc);
}

/** Spawn `node …args` (this Node) and watch it. */
export function spawnNode(name: string, args: readonly string[], options: WatchedOptions = {}): WatchedChild {
  return spawnWatched(name, process.execPath, args, options);
}

/** Run a command to its end within the deadline; a non-zero exit fails with its stderr. */
export async function runWatched(
  name: string,
  command: string,
  args: readonly string[],
  options: WatchedOptions & { deadlineMs?: number } = {},
): Promise<WatchedChild> {
  const { deadlineMs, ...rest } = options;
  const child = spawnWatched(name, command, args, rest);
  const exit = await child.waitForExit(deadlineMs);
  if (exit.code !== 0) throw child.failure(`exited with code ${exit.code}, signal ${exit.signal}`);
  return child;
}
