import { EXIT, type CliIo } from './io.js';
import { commands } from './commands/index.js';

const HELP = `baton — a coordination boundary for consequential calls (see README.md)

usage: baton COMMAND [options]
       baton COMMAND --help

commands:
${commands.map((c) => `  ${c.name.padEnd(12)} ${c.summary}`).join('\n')}
`;

export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(HELP);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const command = commands.find((c) => c.name === name);
  if (command === undefined) {
    io.stderr(`error: usage: unknown command '${name}'\n\n${HELP}`);
    return EXIT.usage;
  }
  return command.run(rest, io);
}
