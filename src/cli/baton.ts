import { wantsHelp, type Command } from './command.js';
import { EXIT, type CliIo } from './io.js';
import { commands } from './commands/index.js';
import { batonPackage } from './version.js';

const HELP = `baton — a coordination boundary for consequential calls (see README.md)

usage: baton COMMAND [options]
       baton help COMMAND        (the same as baton COMMAND --help)
       baton --version [--json]

commands:
${commands.map((c) => `  ${c.name.padEnd(12)} ${c.summary}`).join('\n')}
`;

function unknown(name: string, io: CliIo): number {
  io.stderr(`error: usage: unknown command '${name}'\n\n${HELP}`);
  return EXIT.usage;
}

function version(rest: readonly string[], io: CliIo): number {
  if (rest.length > 1 || (rest.length === 1 && rest[0] !== '--json')) {
    io.stderr('error: usage: baton --version [--json]\n');
    return EXIT.usage;
  }
  const pkg = batonPackage();
  // Two names, two fields: the command a user types (`baton`) and the npm package that ships it
  // (package.json's name, what `npm install` takes), never one `name` that could mean either.
  const json = { program: 'baton', package: pkg.name, version: pkg.version };
  io.stdout(rest[0] === '--json' ? `${JSON.stringify(json)}\n` : `baton ${pkg.version}\n`);
  return EXIT.ok;
}

export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V') return version(rest, io);
  if (name === 'help' && rest.length > 0) {
    const [topic, ...extra] = rest;
    const command = commands.find((c) => c.name === topic);
    if (command === undefined) return unknown(topic ?? '', io);
    if (extra.length > 0) {
      io.stderr(
        `error: usage: help takes one command name: baton help ${topic} (or baton ${topic} --help)\n`,
      );
      return EXIT.usage;
    }
    return command.run(['--help'], io);
  }
  // A missing command or verb is a usage error like any other: on stderr, so stdout never holds a
  // help text a script could take for an answer (`baton harness > items.jsonl`).
  if (name === undefined) {
    io.stderr(`error: usage: a command is needed\n\n${HELP}`);
    return EXIT.usage;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    io.stdout(HELP);
    return EXIT.ok;
  }
  const command = commands.find((c) => c.name === name);
  if (command === undefined) return unknown(name, io);
  if (command.verbs !== undefined && rest.length === 0) {
    io.stderr(`error: usage: baton ${name} needs one of: ${command.verbs.join(', ')}\n\n${command.usage}`);
    return EXIT.usage;
  }
  const typo = unknownVerb(command, rest);
  if (typo !== undefined) {
    io.stderr(`error: usage: unknown ${command.name} verb '${typo}'\n\n${command.usage}`);
    return EXIT.usage;
  }
  return command.run(rest, io);
}

/**
 * A first argument that is neither a flag nor one of the command's verbs, given with `--help`:
 * a typo. Without `--help` each command refuses it itself; with it, the command would print its
 * usage and exit 0.
 */
function unknownVerb(command: Command, rest: readonly string[]): string | undefined {
  const first = rest[0];
  if (command.verbs === undefined || first === undefined || first.startsWith('-')) return undefined;
  if (!wantsHelp(rest)) return undefined;
  return command.verbs.includes(first) ? undefined : first;
}
