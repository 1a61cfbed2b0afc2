/** `baton migrate [--db FILE]`: apply pending schema migrations (DESIGN.md §2). */
import { wantsHelp, type Command } from '../command.js';
import { EXIT, type CliIo } from '../io.js';
import { migrate } from '../../store/migrations.js';
import { openSqliteEngine } from '../../store/sqlite.js';
import { DEFAULT_DB, parse, reportStoreError, withEngine } from './store-args.js';

const USAGE = `usage: baton migrate [--db FILE]

Apply every pending schema migration to the SQLite database FILE (default ${DEFAULT_DB}), creating
it if needed. Each migration runs in its own transaction; running it again is harmless. A database
written by a newer Baton (a migration this version does not know) is refused with exit 1.
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
      options: { db: { type: 'string', default: DEFAULT_DB } },
    });
    return await withEngine(
      () => openSqliteEngine(values.db),
      async (engine) => {
        const result = await migrate(engine);
        const names = result.applied.map((m) => `${m.id} ${m.name}`).join(', ');
        io.stdout(
          result.applied.length === 0
            ? `schema is current (version ${result.version})\n`
            : `applied ${result.applied.length} migration(s): ${names}; schema version ${result.version}\n`,
        );
        return EXIT.ok;
      },
    );
  } catch (error) {
    return reportStoreError(error, io);
  }
}

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'Apply pending schema migrations to the database.',
  usage: USAGE,
  run: runMigrate,
};
