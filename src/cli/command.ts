import { readFile } from 'node:fs/promises';
import { BatonError, isBatonError } from '../core/errors.js';
import { EXIT, type CliIo } from './io.js';

/** One `baton` sub-command. `run` returns the exit code; it never calls process.exit itself. */
export interface Command {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  run(argv: string[], io: CliIo): Promise<number>;
}

export function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}

/** Read the document named by FILE, or standard input for `-` or no argument. */
export async function readInput(file: string | undefined, io: CliIo): Promise<Buffer> {
  if (file === undefined || file === '-') return io.readStdin();
  try {
    return await readFile(file);
  } catch (cause) {
    throw new BatonError('usage', `cannot read ${file}`, { file }, { cause });
  }
}

/** Print a typed error as `error: CODE: message` and map it to an exit code; rethrow anything else. */
export function reportError(error: unknown, io: CliIo): number {
  if (isBatonError(error)) {
    io.stderr(`error: ${error.code}: ${error.message}\n`);
    return error.code === 'internal' ? EXIT.negative : EXIT.usage;
  }
  throw error;
}

/** Resolve on SIGINT, SIGTERM or `stop` (in-process tests), removing every listener it added. */
export function untilStopped(stop: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      stop?.removeEventListener('abort', done);
      resolve();
    };
    process.on('SIGINT', done);
    process.on('SIGTERM', done);
    if (stop?.aborted === true) done();
    else stop?.addEventListener('abort', done);
  });
}
