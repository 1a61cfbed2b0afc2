import { readFile } from 'node:fs/promises';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { BatonError, isBatonError } from '../core/errors.js';
import { EXIT, exitFor, type CliIo } from './io.js';

/** One `baton` sub-command. `run` returns the exit code; it never calls process.exit itself. */
export interface Command {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  /**
   * The verbs its first argument names, for a command made of verbs (`baton harness list`).
   * With them, `baton COMMAND TYPO --help` is refused as `baton COMMAND TYPO` is (baton.ts), not
   * answered with the usage and exit 0, so a script can tell a typo from a help request.
   */
  readonly verbs?: readonly string[];
  run(argv: string[], io: CliIo): Promise<number>;
}

export function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}

type ParseArgsOptionConfig = NonNullable<ParseArgsConfig['options']>[string];
type ParseArgsToken = NonNullable<ReturnType<typeof parseArgs>['tokens']>[number];

/**
 * A flag that may also come from the environment (docs/operations.md, "Environment"): `env` names
 * the variable; a flag given on the command line wins over it, and it wins over `default`.
 * `unlessGiven` lists flags that, given on the command line, make this variable ignored (so
 * `--postgres URL` is not contradicted by a `BATON_DB` left in the environment).
 */
export type EnvOptionConfig = ParseArgsOptionConfig & {
  readonly env?: string;
  readonly unlessGiven?: readonly string[];
};

type Env = Readonly<Record<string, string | undefined>>;

function boolFromEnv(name: string, text: string): boolean {
  if (/^(1|true|yes)$/i.test(text)) return true;
  if (/^(0|false|no)$/i.test(text)) return false;
  throw new BatonError('usage', `${name} must be true or false`);
}

/**
 * Refuse what `parseArgs` lets through silently: a flag that takes one value given twice (it would
 * keep the last one and drop the other without a word) and a flag given an empty value
 * (`--db ''`, `--out=`: nothing to act on, and an empty path or URL would mean something else).
 */
function refuseRepeatedOrEmpty(
  tokens: readonly ParseArgsToken[],
  declared: Readonly<Record<string, EnvOptionConfig>>,
): void {
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const { name } = token;
    if (declared[name]?.multiple !== true) {
      if (seen.has(name)) throw new BatonError('usage', `--${name} is given more than once: give it once`);
      seen.add(name);
    }
    if (token.value === '')
      throw new BatonError('usage', `--${name} needs a value: it was given an empty one`);
  }
}

/**
 * parseArgs's refusal in Baton's words: its own messages speak of "positional arguments" and
 * "ambiguous" arguments and suggest `-- "--json"`, which no Baton command takes. The flag is read
 * back from its message (node:util names it quoted); an unknown shape keeps node's message.
 */
export function argsRefusal(cause: unknown, args: readonly string[], command?: string): string {
  if (!(cause instanceof Error)) return 'bad arguments';
  const code = (cause as { code?: unknown }).code;
  const quoted = /^(?:Unknown option|Option|Unexpected argument) '([^']*)'/.exec(cause.message)?.[1];
  if (quoted === undefined) return cause.message;
  const where = command === undefined ? '' : ` for ${command}`;
  const help = command === undefined ? 'see --help' : `see baton ${command} --help`;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown flag ${quoted}${where} (${help})`;
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL')
    return `unexpected argument '${quoted}': ${command === undefined ? 'this command' : `baton ${command}`} takes no arguments (${help})`;
  if (code !== 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') return cause.message;
  const flag = quoted.split(' ')[0] ?? quoted;
  if (cause.message.includes('does not take an argument')) return `${flag} takes no value: give it alone`;
  if (cause.message.includes('is ambiguous')) {
    // The value parseArgs would not take: the argument after the flag, starting with a dash.
    const next = args[args.indexOf(flag) + 1];
    return next === undefined
      ? `${flag} needs a value`
      : `${flag} needs a value: to give it ${next}, write ${flag}=${next}`;
  }
  return `${flag} needs a value`;
}

/**
 * `parseArgs` with environment fallbacks: options may declare `env` (see EnvOptionConfig). Its
 * TypeError becomes a `usage` error (exit 2), and so does a flag given twice or given an empty
 * value (refuseRepeatedOrEmpty). Precedence: flag, then environment, then default. An empty
 * variable counts as unset. Every command parses its flags here, so they all refuse alike.
 */
export function parseOptions<T extends ParseArgsConfig>(
  config: T,
  env: Env = process.env,
  command?: string,
): ReturnType<typeof parseArgs<T>> {
  const declared = (config.options ?? {}) as Readonly<Record<string, EnvOptionConfig>>;
  const plain: Record<string, ParseArgsOptionConfig> = {};
  for (const [name, o] of Object.entries(declared)) {
    const { env: _env, unlessGiven: _unless, default: _default, ...rest } = o;
    plain[name] =
      o.env === undefined ? { ...rest, ...(_default === undefined ? {} : { default: _default }) } : rest;
  }
  let parsed: ReturnType<typeof parseArgs<T>>;
  let tokens: readonly ParseArgsToken[];
  try {
    const all = parseArgs({ ...config, options: plain, strict: true, tokens: true });
    tokens = all.tokens ?? [];
    parsed = { values: all.values, positionals: all.positionals } as ReturnType<typeof parseArgs<T>>;
  } catch (cause) {
    throw new BatonError('usage', argsRefusal(cause, config.args ?? [], command), {}, { cause });
  }
  refuseRepeatedOrEmpty(tokens, declared);
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const given = new Set(Object.keys(values).filter((k) => values[k] !== undefined));
  for (const [name, o] of Object.entries(declared)) {
    if (o.env === undefined || given.has(name)) continue;
    const text = env[o.env];
    if (text !== undefined && text !== '' && !(o.unlessGiven ?? []).some((f: string) => given.has(f))) {
      values[name] = o.type === 'boolean' ? boolFromEnv(o.env, text) : text;
    } else if (o.default !== undefined) {
      values[name] = o.default as string | boolean;
    }
  }
  return parsed;
}

/**
 * Refuse a flag given to a verb that does not read it (`harness list --decision pause`): a command
 * whose verbs share one parse names, per verb, the flags that verb reads (`allowed`); any other
 * flag with a value is a usage error naming the verb, never silently left unused.
 */
export function onlyFlags(
  values: Readonly<Record<string, unknown>>,
  allowed: readonly string[],
  verb: string,
): void {
  const stray = Object.keys(values).find((k) => values[k] !== undefined && !allowed.includes(k));
  if (stray !== undefined) throw new BatonError('usage', `--${stray} does not apply to \`baton ${verb}\``);
}

/** The `Environment:` lines of a usage text: every option that declares a variable. */
export function envUsage(options: Readonly<Record<string, EnvOptionConfig>>): string {
  const lines = Object.entries(options)
    .filter(([, o]) => o.env !== undefined)
    .map(([name, o]) => `  ${(o.env ?? '').padEnd(24)} --${name}`);
  return lines.length === 0 ? '' : `environment (a flag wins over its variable):\n${lines.join('\n')}\n`;
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

/**
 * A message with the secrets a user may have typed masked: the password of a URL's user info
 * (`postgres://bob:***@db`) and the secret part of a Baton token (`btk.tok_ID.***`). Messages never
 * carry secrets by design (src/core/errors.ts), but some echo what was typed — parseArgs's
 * "Unexpected argument 'postgres://bob:hunter2@db'" when a URL lands where no argument is taken.
 */
export function redactSecrets(text: string): string {
  return text
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/[^\s/:@]*):[^\s/]*@/gi, '$1:***@')
    .replace(/([?&](?:ssl)?password=)[^\s&'"]*/gi, '$1***')
    .replace(/\b(btk\.tok_[A-Za-z0-9]+)\.[A-Za-z0-9_-]+/g, '$1.***');
}

/**
 * Print a typed error as `error: CODE: message` (secrets masked) and map it to its exit code, the
 * same for every command (exitFor: 2 bad input, else 1); rethrow anything else.
 */
export function reportError(error: unknown, io: CliIo): number {
  if (!isBatonError(error)) throw error;
  io.stderr(`error: ${error.code}: ${redactSecrets(error.message)}\n`);
  return exitFor(error.code);
}

/** One JSON document on stdout (`--json`): the whole answer, one line, newline-terminated. */
export function printJson(io: CliIo, value: unknown): void {
  io.stdout(`${JSON.stringify(value)}\n`);
}

/** Resolve on SIGINT, SIGTERM or `stop` (in-process tests), removing every listener it added. */
export function untilStopped(stop: AbortSignal | undefined): Promise<void> {
  return nextStop(stop).then(() => undefined);
}

export type StopCause = 'SIGINT' | 'SIGTERM' | 'abort';

/** The exit code of a process stopped by a signal it did not finish handling (128 + signal number). */
export const SIGNAL_EXIT: Readonly<Record<StopCause, number>> = { SIGINT: 130, SIGTERM: 143, abort: 143 };

/** The next SIGINT, SIGTERM or `stop` abort, removing every listener it added. */
export function nextStop(stop: AbortSignal | undefined): Promise<StopCause> {
  return new Promise((resolve) => {
    const signals = stopSignals(stop);
    void signals.first.then((cause) => {
      signals.dispose();
      resolve(cause);
    });
  });
}

/** The first and second stop of a server (SIGINT, SIGTERM or `stop` for the first). */
export interface StopSignals {
  readonly first: Promise<StopCause>;
  readonly second: Promise<StopCause>;
  /** Remove the listeners (the promises not yet resolved stay pending). */
  dispose(): void;
}

/**
 * One set of listeners for both stops, installed before the server says it is ready and kept
 * until `dispose`: between two separate listeners a signal would meet the default disposition
 * and kill the process.
 */
export function stopSignals(stop: AbortSignal | undefined): StopSignals {
  const causes: ((cause: StopCause) => void)[] = [];
  const first = new Promise<StopCause>((resolve) => causes.push(resolve));
  const second = new Promise<StopCause>((resolve) => causes.push(resolve));
  const on = (cause: StopCause): void => causes.shift()?.(cause);
  const onInt = (): void => on('SIGINT');
  const onTerm = (): void => on('SIGTERM');
  const onAbort = (): void => on('abort');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  if (stop?.aborted === true) onAbort();
  else stop?.addEventListener('abort', onAbort, { once: true });
  return {
    first,
    second,
    dispose: () => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      stop?.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * Run `work` so that a first SIGINT or SIGTERM stops it instead of killing the process: `work` is
 * given an AbortSignal that the signal aborts, stops at its next step and cleans up what it made
 * (temp folders, a scratch database, worker processes) in its own `finally`; then this prints that
 * it stopped and returns 130 or 143 (SIGNAL_EXIT), as `baton serve` does, whatever `work` ended
 * with. The listeners go at the first signal, so a second one meets the default disposition and
 * ends the process at once, cutting the cleanup short. `what` names the cleanup for the message.
 */
export async function runStoppable(
  io: CliIo,
  what: string,
  work: (stop: AbortSignal) => Promise<number>,
): Promise<number> {
  const controller = new AbortController();
  const signals = stopSignals(undefined);
  let cause: StopCause | undefined;
  void signals.first.then((c) => {
    cause = c;
    signals.dispose();
    io.stderr(`baton: ${c}: stopping and ${what} (a second signal ends it at once)\n`);
    controller.abort(new BatonError('unavailable', `stopped by ${c}`));
  });
  let code: number;
  try {
    code = await work(controller.signal);
  } catch (error) {
    if (cause === undefined) throw error;
    code = EXIT.negative;
  } finally {
    signals.dispose();
  }
  if (cause === undefined) return code;
  io.stderr(`baton: stopped by ${cause}\n`);
  return SIGNAL_EXIT[cause];
}
