/**
 * `baton demo`: watch a worker process die right after a payment, and its successor refuse to pay
 * twice (src/cli/demo/story.ts). Exit 0 when the story's facts hold, 1 otherwise.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { BatonError } from '../../core/errors.js';
import { parseOptions, reportError, runStoppable, wantsHelp, type Command } from '../command.js';
import { runMissionsDemo } from '../demo/missions.js';
import { runDemo } from '../demo/story.js';
import { EXIT, type CliIo } from '../io.js';

const USAGE = `usage: baton demo [--db FILE]
       baton demo --missions

A worker PROCESS pays three invoices through the sandbox payments provider and is killed with
SIGKILL right after it sent the second (after the provider applied it, before the worker recorded
the answer). A successor takes over, reconciles the unresolved payment from the provider's signed
status source and does not pay it twice, then pays the third. Then the same with the provider
answering unsigned: that payment stays unresolved, with the reason shown. Ends with the sandbox's
effect count per invoice. Uses a temporary SQLite file unless --db FILE is given (a new file in an
existing folder; its domain key is written beside it as FILE.domain-key.pem).
Exit 0 when exactly one effect per invoice was applied and the unsigned case stayed unresolved.
A first SIGINT or SIGTERM (either form) kills the running worker, closes the servers, removes the
temporary files (the database and its domain key) and exits 130 or 143; a second one ends it at
once, which may leave them behind.

--missions: an agent's payments under a Mission from the reference issuer (labelled for development).
Baton pins the issuer and receives its lifecycle SETs by RFC 8935 push. One payment is made, one is
dispatched but not yet sent, two are queued; then the issuer revokes the Mission: the pushed SET
suppresses the queued ones at once and the dispatched one is refused at provider entry
(mission_not_active). Exit 0 when the provider saw no effect after the revocation and every stop
carries signed Harness Evidence. Temporary files only.
`;

function isFolder(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
}

function parse(argv: string[]): { db: string | undefined; missions: boolean } {
  const { values } = parseOptions({
    args: argv,
    options: { db: { type: 'string' }, missions: { type: 'boolean' } },
    strict: true,
  });
  if (values.missions === true && values.db !== undefined)
    throw new BatonError('usage', '--missions uses temporary files only: drop --db');
  // A rerun on a kept database would find its invoices already handled: the story needs a new file.
  if (values.db !== undefined && existsSync(values.db)) {
    throw new BatonError('usage', '--db must name a file that does not exist yet');
  }
  // As `baton serve` refuses it (src/server/open.ts): before anything is opened or listening.
  if (values.db !== undefined && !isFolder(dirname(values.db))) {
    throw new BatonError('usage', `no folder ${dirname(values.db)} for the SQLite database ${values.db}`);
  }
  return { db: values.db, missions: values.missions === true };
}

async function run(argv: string[], io: CliIo): Promise<number> {
  if (wantsHelp(argv)) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  // A first SIGINT/SIGTERM kills the running worker, closes the servers and removes the temporary
  // files (database, domain key), then exits 130/143; a second one ends it at once.
  return runStoppable(io, 'removing the temporary files', async (stop) => {
    try {
      const { db, missions } = parse(argv);
      const print = (line: string): void => io.stdout(`${line}\n`);
      if (missions) return (await runMissionsDemo({ print, stop })) ? EXIT.ok : EXIT.negative;
      const ok = await runDemo({ ...(db !== undefined && { db }), print, stop });
      return ok ? EXIT.ok : EXIT.negative;
    } catch (error) {
      if (stop.aborted) throw error; // runStoppable reports the stop
      return reportError(error, io);
    }
  });
}

export const demoCommand: Command = {
  name: 'demo',
  summary: 'Watch a killed worker’s successor reconcile instead of paying twice (sandbox).',
  usage: USAGE,
  run,
};
