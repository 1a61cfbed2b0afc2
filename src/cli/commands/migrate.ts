/** `baton migrate [store] [--json]`: apply pending schema migrations (DESIGN.md §2). */
import { printJson, reportError, wantsHelp, type Command } from '../command.js';
import { EXIT, type CliIo } from '../io.js';
import { migrate } from '../../store/migrations.js';
import { parse, withEngine } from './store-args.js';
import { openStoreEngine, STORE_OPTIONS, STORE_USAGE, storeChoice } from './store-choice.js';

const USAGE = `usage: baton migrate [--db FILE | --postgres URL] [--json]

Apply every pending schema migration to the store: the SQLite database FILE (created if needed),
or the PostgreSQL database at URL (which must exist; an unreachable server is named with its
address and nothing is written). Each migration runs in its own transaction; running it again is
harmless, also from several processes at once. A database written by a newer Baton (a migration
this version does not know) is refused with exit 1. Each migration that runs is named on stderr
as it starts ("applying migration N NAME…").
--json  print one JSON document: {"applied":[{"id":N,"name":"…"}…],"version":N}
${STORE_USAGE}
`;

export async function runMigrate(argv: string[], io: CliIo): Promise<number> {
  if (wantsHelp(argv)) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  try {
    const { values } = parse({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: { ...STORE_OPTIONS, json: { type: 'boolean' } },
    });
    const choice = storeChoice(values);
    return await withEngine(
      () => openStoreEngine(choice, { create: true }),
      async (engine) => {
        // A progress line per migration that runs (stderr): one over a large table takes a while.
        const result = await migrate(engine, {
          onApplying: (m) => io.stderr(`applying migration ${m.id} ${m.name}…\n`),
        });
        const applied = result.applied.map((m) => ({ id: m.id, name: m.name }));
        if (values.json === true) {
          printJson(io, { applied, version: result.version });
          return EXIT.ok;
        }
        const names = applied.map((m) => `${m.id} ${m.name}`).join(', ');
        io.stdout(
          applied.length === 0
            ? `schema is current (version ${result.version})\n`
            : `applied ${applied.length} migration(s): ${names}; schema version ${result.version}\n`,
        );
        return EXIT.ok;
      },
    );
  } catch (error) {
    return reportError(error, io);
  }
}

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'Apply pending schema migrations to the database.',
  usage: USAGE,
  run: runMigrate,
};
