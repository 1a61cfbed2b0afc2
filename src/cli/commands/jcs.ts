import { parseArgs } from 'node:util';
import { canonicalize } from '../../core/jcs.js';
import { digestJcs } from '../../core/digest.js';
import { parseStrictJson } from '../../core/json.js';
import { BatonError } from '../../core/errors.js';
import { readInput, reportError, wantsHelp, type Command } from '../command.js';
import { EXIT, type CliIo } from '../io.js';

async function readDocument(argv: string[], io: CliIo): Promise<unknown> {
  let positionals: string[];
  try {
    ({ positionals } = parseArgs({ args: argv, allowPositionals: true, strict: true, options: {} }));
  } catch (cause) {
    throw new BatonError('usage', 'unknown option', {}, { cause });
  }
  if (positionals.length > 1) throw new BatonError('usage', 'expected at most one FILE');
  return parseStrictJson(await readInput(positionals[0], io));
}

function documentCommand(name: string, summary: string, render: (doc: unknown) => string): Command {
  const usage = `usage: baton ${name} [FILE|-]\n\n${summary}\nReads standard input when FILE is - or absent. Invalid input (malformed JSON, duplicate members,\nlone surrogates, numbers out of range) prints nothing on stdout, names the error code on stderr and\nexits 2.\n`;
  return {
    name,
    summary,
    usage,
    async run(argv, io) {
      if (wantsHelp(argv)) {
        io.stdout(usage);
        return EXIT.ok;
      }
      try {
        const output = render(await readDocument(argv, io));
        io.stdout(output);
        return EXIT.ok;
      } catch (error) {
        return reportError(error, io);
      }
    },
  };
}

export const jcsCommand = documentCommand(
  'jcs',
  'Print the RFC 8785 canonical form of a JSON document (no trailing newline).',
  canonicalize,
);

export const digestCommand = documentCommand(
  'digest',
  "Print 'sha-256:' + base64url (no padding) of the SHA-256 of the document's JCS bytes.",
  digestJcs,
);
