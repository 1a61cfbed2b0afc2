import type { ParseArgsConfig } from 'node:util';
import { canonicalize } from '../../core/jcs.js';
import { digestJcs } from '../../core/digest.js';
import { BatonError } from '../../core/errors.js';
import { parseOptions, reportError, wantsHelp, type Command } from '../command.js';
import { EXIT, type CliIo } from '../io.js';
import { readJsonInput } from '../json-file.js';

async function readDocument(
  argv: string[],
  io: CliIo,
  json: boolean,
): Promise<{ doc: unknown; json: boolean }> {
  const options: NonNullable<ParseArgsConfig['options']> = json ? { json: { type: 'boolean' } } : {};
  const { values, positionals } = parseOptions({ args: argv, allowPositionals: true, strict: true, options });
  if (positionals.length > 1) throw new BatonError('usage', 'expected at most one FILE');
  return { doc: await readJsonInput(positionals[0], io), json: values['json'] === true };
}

/** `json`: the member name of the one-document `--json` answer (`jcs` prints JSON already). */
function documentCommand(
  name: string,
  summary: string,
  render: (doc: unknown) => string,
  json?: string,
): Command {
  const flag = json === undefined ? '' : ' [--json]';
  const jsonHelp = json === undefined ? '' : `--json prints one JSON document {"${json}":"…"}.\n`;
  const usage = `usage: baton ${name}${flag} [FILE|-]\n\n${summary}\nReads standard input when FILE is - or absent. Invalid input (malformed JSON, duplicate members,\nlone surrogates, numbers out of range) prints nothing on stdout, names the error code on stderr and\nexits 2.\n${jsonHelp}`;
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
        const input = await readDocument(argv, io, json !== undefined);
        const output = render(input.doc);
        io.stdout(input.json ? `${JSON.stringify({ [json ?? name]: output })}\n` : output);
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
  'digest',
);
