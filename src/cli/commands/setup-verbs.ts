/**
 * `baton domain show|set`, `baton profiles list|show|add|pin`, `baton authorities
 * list|show|create`: the setup calls of the HTTP API (docs/api.md "Domain setup") from the shell,
 * through the SDK's AdminClient. Records print as JSON; lists as one line per item.
 */
import { join } from 'node:path';
import { BatonError, isBatonError } from '../../core/errors.js';
import type { JsonObject } from '../../core/json.js';
import { formatRfc3339 } from '../../core/time.js';
import { profileDigest, validateProfile, type DomainConfigInput } from '../../occurrences/index.js';
import type { AdminClient } from '../../client/index.js';
import { profilesDir } from '../../providers/index.js';
import { fetchSandboxFacts, pinToSandbox } from '../config/pin.js';
import { onlyFlags, reportError, wantsHelp, type Command } from '../command.js';
import { EXIT, type CliIo } from '../io.js';
import { inputName, readJsonInput } from '../json-file.js';
import { adminClient, REMOTE_OPTIONS, REMOTE_USAGE } from './remote.js';
import { parse } from './store-args.js';

type Values = Record<string, string | undefined>;

/**
 * One verb: the flags it reads (any other given is refused, not ignored) and what it does. Every
 * verb that calls the server reads --url and --token (SERVER).
 */
interface Verb {
  readonly flags: readonly string[];
  run(args: readonly string[], values: Values, io: CliIo): Promise<void>;
}

const SERVER = Object.keys(REMOTE_OPTIONS);

const json = (io: CliIo, value: unknown): void => io.stdout(`${JSON.stringify(value, null, 2)}\n`);

async function readJsonObject(file: string | undefined, io: CliIo): Promise<JsonObject> {
  const value = await readJsonInput(file, io);
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new BatonError('usage', `${inputName(file)} must hold a JSON object`);
  return value;
}

function arity(args: readonly string[], n: number, shape: string): void {
  if (args.length !== n) throw new BatonError('usage', `expected: ${shape}`);
}

/** Run `verbs[positionals[0]]`, with the remote options plus `extra`. */
function setupCommand(
  name: string,
  summary: string,
  usage: string,
  extra: Readonly<Record<string, { type: 'string' }>>,
  verbs: Readonly<Record<string, Verb>>,
): Command {
  const run = async (argv: string[], io: CliIo): Promise<number> => {
    if (wantsHelp(argv)) {
      io.stdout(usage);
      return EXIT.ok;
    }
    try {
      const first = argv[0];
      const named = first !== undefined && Object.hasOwn(verbs, first) ? `${name} ${first}` : name;
      const { values, positionals } = parse(
        { args: argv, strict: true, allowPositionals: true, options: { ...REMOTE_OPTIONS, ...extra } },
        named,
      );
      const [verb, ...args] = positionals;
      const fn = verb !== undefined && Object.hasOwn(verbs, verb) ? verbs[verb] : undefined;
      if (fn === undefined)
        throw new BatonError('usage', `expected one of: ${Object.keys(verbs).join(', ')}`);
      onlyFlags(values, fn.flags, `${name} ${verb ?? ''}`);
      await fn.run(args, values, io);
      return EXIT.ok;
    } catch (error) {
      return reportError(error, io);
    }
  };
  return { name, summary, usage, verbs: Object.keys(verbs), run };
}

export const domainCommand = setupCommand(
  'domain',
  'Show or configure the coordination domain over the HTTP API.',
  `usage: baton domain show [server]
       baton domain set FILE [server]

show prints the domain (id, key id, limits, bypass-path disclosure) as JSON. set configures it from
FILE (or - for stdin): {"id", "limits", "bypassPaths"} as in docs/api.md (PUT /v1/domain; admin);
the same configuration again changes nothing.
${REMOTE_USAGE}
`,
  {},
  {
    show: {
      flags: SERVER,
      run: async (args, v, io) => {
        arity(args, 0, 'domain show');
        json(io, await adminClient(v).getDomain());
      },
    },
    set: {
      flags: SERVER,
      run: async (args, v, io) => {
        arity(args, 1, 'domain set FILE');
        const config = (await readJsonObject(args[0], io)) as unknown as DomainConfigInput;
        json(io, await adminClient(v).configureDomain(config));
      },
    },
  },
);

async function pinnedTemplate(v: Values, io: CliIo): Promise<JsonObject> {
  const sandbox = v['from-sandbox'];
  if (sandbox === undefined) throw new BatonError('usage', 'pin needs --from-sandbox URL');
  const file = v['template'] ?? join(profilesDir(), 'sandbox-payments-ed25519.json');
  const template = validateProfile(await readJsonObject(file, io));
  return pinToSandbox(
    template,
    await fetchSandboxFacts(sandbox, waitMs(v), (line) => io.stderr(line)),
  ) as unknown as JsonObject;
}

export const profilesCommand = setupCommand(
  'profiles',
  'List, show, register or pin provider profiles over the HTTP API.',
  `usage: baton profiles list [server]
       baton profiles show ID VERSION [server]
       baton profiles add FILE [--pin-to-sandbox URL] [--wait S] [server]
       baton profiles pin --from-sandbox URL [--template FILE] [--wait S]

list prints one line per registered version: id, version, digest, account, environment,
registeredAt (RFC 3339). add registers the profile in FILE (or - for stdin), first pinned to a
running sandbox with --pin-to-sandbox, and prints "registered"; the same document again changes
nothing and prints "unchanged", another document under a registered (id, version) is
profile_conflict. pin needs no server: it prints the profile
(default: the shipped profiles/sandbox-payments-ed25519.json) pinned to the sandbox at URL — its
origin and Ed25519 key, under version <version>.<8 hex> — so the shipped profiles never need hand
editing. --wait S: how long to wait for a sandbox that is still starting (default 15; said once on
stderr before waiting).
${REMOTE_USAGE}
`,
  {
    'from-sandbox': { type: 'string' },
    template: { type: 'string' },
    'pin-to-sandbox': { type: 'string' },
    wait: { type: 'string' },
  },
  {
    list: {
      flags: SERVER,
      run: async (args, v, io) => {
        arity(args, 0, 'profiles list');
        const { profiles, truncated } = await adminClient(v).listProfiles();
        for (const p of profiles)
          io.stdout(
            `${p.id}  ${p.version}  ${p.digest}  ${p.account}  ${p.environment}  ${formatRfc3339(p.registeredAt)}\n`,
          );
        if (truncated) io.stderr('(more profiles exist than one list shows)\n');
      },
    },
    show: {
      flags: SERVER,
      run: async (args, v, io) => {
        arity(args, 2, 'profiles show ID VERSION');
        json(io, await adminClient(v).getProfile(args[0] ?? '', args[1] ?? ''));
      },
    },
    add: {
      flags: [...SERVER, 'pin-to-sandbox', 'wait'],
      run: async (args, v, io) => {
        arity(args, 1, 'profiles add FILE');
        if (v['wait'] !== undefined && v['pin-to-sandbox'] === undefined)
          throw new BatonError('usage', '--wait is for --pin-to-sandbox');
        let document = await readJsonObject(args[0], io);
        const sandbox = v['pin-to-sandbox'];
        if (sandbox !== undefined)
          document = pinToSandbox(
            validateProfile(document),
            await fetchSandboxFacts(sandbox, waitMs(v), (line) => io.stderr(line)),
          ) as unknown as JsonObject;
        io.stdout(await addProfile(adminClient(v), document));
      },
    },
    // No server: --url and --token would be read by nothing.
    pin: {
      flags: ['from-sandbox', 'template', 'wait'],
      run: async (args, v, io) => {
        arity(args, 0, 'profiles pin --from-sandbox URL');
        json(io, await pinnedTemplate(v, io));
      },
    },
  },
);

/**
 * Register a profile document, or say `unchanged` when that (id, version) is registered with this
 * very document (its digest), as `apply` does: the server answers both alike (200, the
 * registration), so the CLI reads first. Another document under that version is POSTed anyway,
 * for the server's own `profile_conflict`.
 */
async function addProfile(admin: AdminClient, document: JsonObject): Promise<string> {
  const profile = validateProfile(document);
  const current = await admin.getProfile(profile.id, profile.version).catch((error: unknown) => {
    if (isBatonError(error, 'profile_not_found')) return undefined;
    throw error;
  });
  if (current !== undefined && current.digest === profileDigest(profile))
    return `profile ${current.id}@${current.version}: unchanged ${current.digest}\n`;
  const p = await admin.registerProfile(document);
  return `profile ${p.id}@${p.version}: registered ${p.digest}\n`;
}

/** How long to wait for a sandbox that is still starting (default 15 s). */
function waitMs(v: Values): number {
  const text = v['wait'];
  if (text === undefined) return 15_000;
  if (!/^[0-9]{1,3}$/.test(text)) throw new BatonError('usage', '--wait must be whole seconds (0..999)');
  return Number(text) * 1000;
}

function total(text: string | undefined): number {
  if (text === undefined || !/^[1-9][0-9]{0,15}$/.test(text) || !Number.isSafeInteger(Number(text)))
    throw new BatonError('usage', '--total must be a whole number of at least 1');
  return Number(text);
}

export const authoritiesCommand = setupCommand(
  'authorities',
  'List, show or create authority budgets over the HTTP API.',
  `usage: baton authorities list [server]
       baton authorities show ID [server]
       baton authorities create --id ID --unit UNIT --total N [server]

list prints one line per budget: id, unit, total, reserved, consumed. create makes a budget;
the same terms again return it unchanged, other terms for an existing id are authority_conflict.
${REMOTE_USAGE}
`,
  { id: { type: 'string' }, unit: { type: 'string' }, total: { type: 'string' } },
  {
    list: {
      flags: SERVER,
      run: async (args, v, io) => {
        arity(args, 0, 'authorities list');
        const { authorities, truncated } = await adminClient(v).listAuthorities();
        for (const a of authorities)
          io.stdout(`${a.id}  ${a.unit}  total ${a.total}  reserved ${a.reserved}  consumed ${a.consumed}\n`);
        if (truncated) io.stderr('(more authorities exist than one list shows)\n');
      },
    },
    show: {
      flags: SERVER,
      run: async (args, v, io) => {
        arity(args, 1, 'authorities show ID');
        json(io, await adminClient(v).getAuthority(args[0] ?? ''));
      },
    },
    create: {
      flags: [...SERVER, 'id', 'unit', 'total'],
      run: async (args, v, io) => {
        arity(args, 0, 'authorities create --id ID --unit UNIT --total N');
        const id = v['id'];
        const unit = v['unit'];
        if (id === undefined || unit === undefined)
          throw new BatonError('usage', 'create needs --id and --unit');
        json(io, await adminClient(v).createAuthority({ id, unit, total: total(v['total']) }));
      },
    },
  },
);
