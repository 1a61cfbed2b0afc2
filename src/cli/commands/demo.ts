/**
 * `baton demo`: watch a worker process die right after a payment, and its successor refuse to pay
 * twice (src/cli/demo/story.ts). Exit 0 when the story's facts hold, 1 otherwise.
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { BatonError } from '../../core/errors.js';
import { reportError, wantsHelp, type Command } from '../command.js';
import { runDemo } from '../demo/story.js';
import { EXIT, type CliIo } from '../io.js';

const USAGE = `usage: baton demo [--db FILE]

A worker PROCESS pays three invoices through the sandbox payments provider and is killed with
SIGKILL right after it sent the second (after the provider applied it, before the worker recorded
the answer). A successor takes over, reconciles the unresolved payment from the provider's signed
status source and does not pay it twice, then pays the third. Then the same with the provider
answering unsigned: that payment stays unresolved, with the reason shown. Ends with the sandbox's
effect count per invoice. Uses a temporary SQLite file unless --db FILE is given (a new file).
Exit 0 when exactly one effect per invoice was applied and the unsigned case stayed unresolved.
`;

function parse(argv: string[]): { db: string | undefined } {
  let values: { db?: string };
  try {
    ({ values } = parseArgs({ args: argv, options: { db: { type: 'string' } }, strict: true }));
  } catch (cause) {
    throw new BatonError('usage', 'unknown option or missing value', {}, { cause });
  }
  // A rerun on a kept database would find its invoices already handled: the story needs a new file.
  if (values.db !== undefined && existsSync(values.db)) {
    throw new BatonError('usage', '--db must name a file that does not exist yet');
  }
  return { db: values.db };
}

async function run(argv: string[], io: CliIo): Promise<number> {
  if (wantsHelp(argv)) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  try {
    const { db } = parse(argv);
    const ok = await runDemo({ ...(db !== undefined && { db }), print: (line) => io.stdout(`${line}\n`) });
    return ok ? EXIT.ok : EXIT.negative;
  } catch (error) {
    return reportError(error, io);
  }
}

export const demoCommand: Command = {
  name: 'demo',
  summary: 'Watch a killed worker’s successor reconcile instead of paying twice (sandbox).',
  usage: USAGE,
  run,
};
