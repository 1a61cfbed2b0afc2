import { ERROR_CODES, isBatonErrorCode } from '../core/errors.js';

/** What a command needs from the outside world, so commands can be tested in-process. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readStdin(): Promise<Buffer>;
  /**
   * Resolves once everything written to stdout so far has been written (or has failed: then the
   * process's stdout guard has already ended it, `guardStdout`). A command that reports success
   * on stderr after writing its result to stdout awaits it first, so a failed write is never
   * followed by a claim of success. Absent: every write is complete when it returns.
   */
  flush?(): Promise<void>;
  /**
   * Resolves once stdout can take more: at once while its buffer is below its high-water mark,
   * else on its 'drain'. A command writing a large output awaits it now and then, so a slow
   * reader holds the command back instead of the whole output piling up in memory. Absent:
   * every write is complete when it returns.
   */
  drained?(): Promise<void>;
}

export const processIo: CliIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks);
  },
  // The empty write's callback runs after every earlier write's; the error event of a failed one
  // (emitted on a later tick) has run by the next turn of the event loop.
  flush: () => new Promise((resolve) => void process.stdout.write('', () => setImmediate(resolve))),
  // A failed write ends the process (guardStdout), so a 'drain' that never comes cannot strand it.
  drained: () =>
    process.stdout.writableNeedDrain
      ? new Promise((resolve) => void process.stdout.once('drain', resolve))
      : Promise.resolve(),
};

/**
 * Exit code when the reader of stdout has gone (EPIPE: `baton log export | head -1`): 141, the
 * 128 + SIGPIPE a shell reports for a program a closed pipe stops. Nothing more is written.
 */
export const EXIT_CLOSED_PIPE = 141;

/**
 * The `baton` executable's stdout guard (docs/cli.md "Exit codes"): a write that fails ends the
 * process at once, so nothing more is written and no success is claimed after it. A reader that
 * went away (EPIPE) ends it quietly with EXIT_CLOSED_PIPE; any other failure says so on stderr as
 * `error: internal: …`, exit 1. Without it Node throws an unhandled 'error' event with a stack.
 */
export function guardStdout(
  stdout: NodeJS.EventEmitter = process.stdout,
  exit: (code: number) => void = (code) => process.exit(code),
  stderr: (text: string) => void = (text) => void process.stderr.write(text),
): void {
  stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') return exit(EXIT_CLOSED_PIPE);
    stderr(`error: internal: cannot write to stdout: ${error.code ?? error.message}\n`);
    exit(EXIT.negative);
  });
}

/**
 * Exit codes every command shares (docs/cli.md "Exit codes"): 0 success, 1 a negative verdict
 * (invalid, broken, a failed case) or any failure that is not the caller's input, 2 bad input or
 * usage.
 */
export const EXIT = { ok: 0, negative: 1, usage: 2 } as const;

/**
 * Whether an error code says the caller's input was wrong (exit 2): the arguments, a value, a file
 * or document the command was given (a key, a config, a matrix, a profile, strict JSON). That is
 * exactly the codes whose HTTP status is 400 or 413 (src/core/errors.ts), so the command line and
 * the HTTP API draw the line in one place and every command draws it the same way. Anything else
 * exits 1, whichever command meets it: the store (store_corrupt, store_schema_newer, store_busy),
 * a server or provider that does not answer (unavailable), a refusal that depends on what is
 * stored (a conflict, not found, a state), internal.
 */
export function isBadInput(code: string): boolean {
  if (!isBatonErrorCode(code)) return false;
  const { status } = ERROR_CODES[code];
  return status === 400 || status === 413;
}

/** The exit code of a typed failure: 2 when the caller's input was wrong, else 1. */
export function exitFor(code: string): number {
  return isBadInput(code) ? EXIT.usage : EXIT.negative;
}
