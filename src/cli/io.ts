import { ERROR_CODES, isBatonErrorCode } from '../core/errors.js';

/** What a command needs from the outside world, so commands can be tested in-process. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readStdin(): Promise<Buffer>;
}

export const processIo: CliIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks);
  },
};

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
