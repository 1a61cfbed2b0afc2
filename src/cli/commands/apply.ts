/**
 * `baton apply FILE`: apply a baton.config.json (docs/config.md) to a running server over the HTTP
 * API, idempotently: a second apply of the same file changes nothing and says "unchanged"; a
 * conflicting change is refused before the first write.
 */
import {
  appliedBefore,
  applyConfig,
  describeOutcome,
  printOnceLine,
  type ApplyOptions,
} from '../config/apply.js';
import { httpTarget } from '../config/target.js';
import { reportError, wantsHelp, type Command } from '../command.js';
import { BatonError } from '../../core/errors.js';
import { EXIT, type CliIo } from '../io.js';
import { adminClient, notBatonThere, REMOTE_OPTIONS, REMOTE_USAGE, remoteUrl } from './remote.js';
import { parse } from './store-args.js';

const USAGE = `usage: baton apply FILE [--url URL] [--token TOKEN] [--tokens-file FILE]

Apply a config file (baton.config.json; docs/config.md, schemas/baton.config.schema.json) to a
running server: the domain, provider profiles (pinned to a running sandbox when the file asks),
authority budgets, Mission issuers, continuity producers' Ed25519 keys and operator tokens.
Idempotent: what already exists as configured is "unchanged"; a conflicting change (an
authority's unit, a profile version's document, another domain id) is refused with
config_conflict and nothing is applied. A producer's keys are its whole set: other keys replace
the pinned ones ("updated"), none remove the pin ("removed"). Tokens are never re-minted:
new ones go to the tokens file (mode 0600; --tokens-file overrides the config's tokens.file) or,
with none named, are printed once. A refusal part-way names what was applied before it. Exit 0
applied or unchanged, 1 refused (or stopped after a write), 2 bad file or usage (nothing written).
${REMOTE_USAGE}
`;

export async function runApply(argv: string[], io: CliIo): Promise<number> {
  if (wantsHelp(argv)) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  let remote: { url?: string | undefined } = {};
  try {
    const { values, positionals } = parse(
      {
        args: argv,
        strict: true,
        allowPositionals: true,
        options: { ...REMOTE_OPTIONS, 'tokens-file': { type: 'string' } },
      },
      'apply',
    );
    const [file, ...rest] = positionals;
    if (file === undefined || rest.length > 0) throw new BatonError('usage', 'expected one config FILE');
    remote = values;
    const tokensFile = values['tokens-file'];
    const target = httpTarget(adminClient(values));
    const options: ApplyOptions = {
      progress: (line) => io.stderr(line),
      server: serverOf(remoteUrl(values)),
      ...(tokensFile !== undefined && { tokensFile }),
    };
    const outcome = await applyConfig(file, target, (t) => io.stdout(printOnceLine(t)), options);
    io.stdout(describeOutcome(outcome));
    return EXIT.ok;
  } catch (caught) {
    const error = notBatonThere(caught, remote);
    const code = reportError(error, io);
    // Exit 2 says nothing was written: a refusal part-way, after a write, is exit 1 (the message
    // names what was applied before it).
    return appliedBefore(caught) ? EXIT.negative : code;
  }
}

export const applyCommand: Command = {
  name: 'apply',
  summary: 'Apply a baton.config.json to a running server (idempotent).',
  usage: USAGE,
  run: (argv, io) => runApply(argv, io),
};

/**
 * The server a tokens file entry names: the URL without what may carry a secret (user info, query,
 * fragment) — adminClient checked it parses.
 */
function serverOf(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}
