/**
 * `baton harness list|show|stop|requeue|rebind|taint|session` (operator views and actions over the stored harness,
 * docs/harness.md) and `baton stop-matrix check FILE` (A3.10: the validation `baton serve` runs).
 */
import { BatonError } from '../../core/errors.js';
import { ITEM_STATES, parseMatrix, type ItemState } from '../../missions/index.js';
import { openBaton, type OpenedBaton } from '../../server/open.js';
import { onlyFlags, parseOptions, readInput, reportError, wantsHelp, type Command } from '../command.js';
import { EXIT, type CliIo } from '../io.js';
import { readJsonInput } from '../json-file.js';
import { parse } from './store-args.js';
import { STORE_OPTIONS, STORE_USAGE, storeChoice } from './store-choice.js';

const HARNESS_USAGE = `usage: baton harness list [--mission ORIGIN#ID] [--state S[,S…]] [store]
       baton harness show ITEM [store]
       baton harness stop ITEM --decision suppress|pause|terminate|handoff [store]
       baton harness requeue ITEM [store]
       baton harness rebind ITEM --binding FILE|- [store]
       baton harness taint SESSION --source NAME [store]
       baton harness session SESSION [store]

list     Work items as JSON lines (id, kind, state, mission, action class, version); --state
         keeps those in the states named (comma-separated; an unknown or empty one: exit 2):
         ${ITEM_STATES.join(', ')}.
show     One item and its evidence chain (work:ITEM) as JSON.
stop     Operator stop (reason operator_stop, Harness Evidence signed with the domain key);
         terminate also releases the item's reserved occurrence.
requeue  Back to queued; the next dispatch checks the Mission again (superseded: exit 1,
         successor_binding_required).
rebind   A superseded Mission's held item to its successor: FILE is the successor's
         mission_binding (JSON: mission_id, mission_origin, stop_policy[, authority_hash,
         enforcement_scope]); same issuer, its view active and fresh, else the code on stderr;
         recorded as rebound (docs/harness.md "Rebind to a successor Mission").
taint    HAR-29: untrusted content (NAME says which source, e.g. tool_result) entered the
         session: sticky; its egress items are suppressed now (session_tainted evidence) and
         at every later dispatch or entry (docs/harness.md "Session taint (HAR-29)").
session  One session (binding, tainted, version) and its evidence chain (session:SESSION).
The domain key must exist (it is never created here).
${STORE_USAGE}
`;

const CLI_PAGE = 500;

async function withBaton<T>(
  values: Parameters<typeof storeChoice>[0],
  fn: (b: OpenedBaton) => Promise<T>,
): Promise<T> {
  const opened = await openBaton(storeChoice(values), { createDomainKey: false });
  try {
    return await fn(opened);
  } finally {
    await opened.close();
  }
}

function missionFilter(text: string | undefined): { origin: string; id: string } | undefined {
  if (text === undefined) return undefined;
  const at = text.lastIndexOf('#');
  if (at <= 0 || at === text.length - 1) throw new BatonError('usage', '--mission must be ORIGIN#ID');
  return { origin: text.slice(0, at), id: text.slice(at + 1) };
}

/** `--state S[,S…]`: each a known item state, none empty (as GET /v1/harness/items?state= checks). */
function stateFilter(text: string | undefined): ItemState[] | undefined {
  if (text === undefined) return undefined;
  const states = text.split(',');
  const known: readonly string[] = ITEM_STATES;
  const bad = states.find((s) => !known.includes(s));
  if (bad !== undefined)
    throw new BatonError(
      'usage',
      `--state ${bad === '' ? 'names an empty state' : `names an unknown state '${bad}'`}: each (comma-separated) is one of ${ITEM_STATES.join(', ')}`,
    );
  return states as ItemState[];
}

/**
 * The verbs `runHarness` branches on (test/cli/verbs.test.ts checks them against its usage), each
 * with the flags it reads besides the store's: any other is refused, not ignored.
 */
const HARNESS_FLAGS: Readonly<Record<string, readonly string[]>> = {
  list: ['mission', 'state'],
  show: [],
  stop: ['decision'],
  requeue: [],
  rebind: ['binding'],
  taint: ['source'],
  session: [],
};
const HARNESS_VERBS: readonly string[] = Object.keys(HARNESS_FLAGS);

async function runHarness(argv: string[], io: CliIo): Promise<number> {
  if (wantsHelp(argv) || argv.length === 0) {
    io.stdout(HARNESS_USAGE);
    return argv.length === 0 ? EXIT.usage : EXIT.ok;
  }
  try {
    const [verb, ...rest] = argv;
    const { values, positionals } = parse({
      args: rest,
      strict: true,
      allowPositionals: true,
      options: {
        ...STORE_OPTIONS,
        mission: { type: 'string' },
        state: { type: 'string' },
        decision: { type: 'string' },
        binding: { type: 'string' },
        source: { type: 'string' },
      },
    });
    const own = Object.hasOwn(HARNESS_FLAGS, verb ?? '') ? HARNESS_FLAGS[verb ?? ''] : undefined;
    if (own === undefined) throw new BatonError('usage', `expected one of: ${HARNESS_VERBS.join(', ')}`);
    onlyFlags(values, [...Object.keys(STORE_OPTIONS), ...own], `harness ${verb ?? ''}`);
    const one = (what: string) => (): string => {
      const id = positionals[0];
      if (id === undefined || positionals.length !== 1)
        throw new BatonError('usage', `baton harness ${verb} needs one ${what}`);
      return id;
    };
    const item = one('ITEM');
    const session = one('SESSION');
    const out = (v: unknown): void => io.stdout(`${JSON.stringify(v)}\n`);
    if (verb === 'list') {
      const mission = missionFilter(values.mission);
      const states = stateFilter(values.state);
      await withBaton(values, async (b) => {
        // Every item, a page at a time (keyset): the list never stops short without saying so.
        let after: { createdAt: number; id: string } | undefined;
        for (;;) {
          const page = await b.harness.listItems({
            ...(mission && { mission }),
            ...(states && { states }),
            ...(after && { after }),
            limit: CLI_PAGE,
          });
          for (const i of page) {
            out({
              id: i.id,
              kind: i.kind,
              state: i.state,
              mission: i.binding && `${i.binding.mission_origin}#${i.binding.mission_id}`,
              actionClass: i.actionClass,
              version: i.version,
            });
          }
          const last = page.at(-1);
          if (page.length < CLI_PAGE || last === undefined) break;
          after = { createdAt: last.createdAt, id: last.id };
        }
      });
    } else if (verb === 'show') {
      const id = item();
      await withBaton(values, async (b) =>
        out({ item: await b.harness.getItem(id), evidence: await b.harness.events(`work:${id}`) }),
      );
    } else if (verb === 'stop') {
      const id = item();
      if (values.decision === undefined) throw new BatonError('usage', 'stop needs --decision');
      await withBaton(values, async (b) => out(await b.harness.stop(id, values.decision, 'operator:cli')));
    } else if (verb === 'requeue') {
      const id = item();
      await withBaton(values, async (b) => out(await b.harness.requeue(id, 'operator:cli')));
    } else if (verb === 'rebind') {
      const id = item();
      if (values.binding === undefined) throw new BatonError('usage', 'rebind needs --binding FILE|-');
      const binding = await readJsonInput(values.binding, io);
      await withBaton(values, async (b) =>
        out(await b.harness.rebind(id, { mission_binding: binding }, 'operator:cli')),
      );
    } else if (verb === 'taint') {
      const id = session();
      if (values.source === undefined) throw new BatonError('usage', 'taint needs --source NAME');
      const source = values.source;
      await withBaton(values, async (b) => out(await b.harness.taintSession(id, { source }, 'operator:cli')));
    } else if (verb === 'session') {
      const id = session();
      await withBaton(values, async (b) => out(await b.harness.getSession(id)));
    } else {
      throw new BatonError('usage', `expected one of: ${HARNESS_VERBS.join(', ')}`);
    }
    return EXIT.ok;
  } catch (error) {
    return reportError(error, io);
  }
}

export const harnessCommand: Command = {
  name: 'harness',
  verbs: HARNESS_VERBS,
  summary: 'List, show, stop, requeue or rebind harness work items; taint or show a session.',
  usage: HARNESS_USAGE,
  run: runHarness,
};

const MATRIX_USAGE = `usage: baton stop-matrix check FILE|-

Validate a stop-behaviour matrix (docs/harness.md): strict JSON, every state row (revoked, expired,
completed, cascaded, suspended, superseded, unknown, stale, other) × every action class present
and within the draft's minimum, never continue. Prints "REF DIGEST" and exits 0; otherwise names
stop_matrix_invalid and the failing cell on stderr and exits 2 (as baton serve --stop-matrix does).
`;

export const stopMatrixCommand: Command = {
  name: 'stop-matrix',
  verbs: ['check'],
  summary: 'Validate a stop-behaviour matrix against the harness draft minimums.',
  usage: MATRIX_USAGE,
  async run(argv, io) {
    if (wantsHelp(argv)) {
      io.stdout(MATRIX_USAGE);
      return EXIT.ok;
    }
    try {
      const { positionals } = parseOptions({ args: argv, allowPositionals: true, strict: true, options: {} });
      const [verb, file, ...extra] = positionals;
      if (verb !== 'check' || file === undefined || extra.length > 0)
        throw new BatonError('usage', 'expected: baton stop-matrix check FILE|-');
      const m = parseMatrix(await readInput(file, io));
      io.stdout(`${m.ref} ${m.digest}\n`);
      return EXIT.ok;
    } catch (error) {
      if (error instanceof BatonError && error.code === 'stop_matrix_invalid') {
        const where = ['row', 'actionClass', 'member', 'path']
          .map((k) => error.details[k])
          .filter((x): x is string => typeof x === 'string');
        io.stderr(
          `error: stop_matrix_invalid: ${error.message}${where.length > 0 ? ` (${where.join(' ')})` : ''}\n`,
        );
        return EXIT.usage;
      }
      return reportError(error, io);
    }
  },
};
