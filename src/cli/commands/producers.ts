/**
 * `baton producers list|get|pin|unpin`: the continuity producers' pinned Ed25519 keys
 * (docs/observations.md "Pinned producer keys"; OBS-12 ¶25) over the HTTP API, through the SDK's
 * AdminClient — `PUT|GET|DELETE /v1/continuity/producers`. A keys file is read and every key checked
 * by the reader the server uses (src/observations/producer-pin.ts) before any request, so a bad one
 * is refused with its own code (exit 2) and nothing is pinned.
 */
import { BatonError, isBatonError } from '../../core/errors.js';
import type { Ed25519PublicJwk } from '../../core/ed25519.js';
import type { JsonValue } from '../../core/json.js';
import { formatRfc3339 } from '../../core/time.js';
import type { PinnedProducerSummary } from '../../client/index.js';
import { readProducerId, readProducerKeys } from '../../observations/index.js';
import { onlyFlags, printJson, reportError, wantsHelp, type Command } from '../command.js';
import { readJsonInput } from '../json-file.js';
import { EXIT, type CliIo } from '../io.js';
import { adminClient, REMOTE_OPTIONS, REMOTE_USAGE } from './remote.js';
import { parse } from './store-args.js';

const USAGE = `usage: baton producers list [--json] [server]
       baton producers get PRODUCER [--json] [server]
       baton producers pin PRODUCER --keys FILE [--json] [server]
       baton producers unpin PRODUCER [--json] [server]

The Ed25519 public keys a continuity producer's signed records must verify under
(docs/observations.md "Pinned producer keys"). list prints one line per pinned producer: producer,
kids (comma-separated), pinnedAt (RFC 3339), pinnedBy; get prints that line for one producer
(not_found, exit 1, when it has no pin). pin sets PRODUCER's WHOLE key set from FILE (or - for
stdin), replacing any keys pinned before (created, updated or unchanged, said on stderr), and prints
its line. FILE holds a JSON array of 1..16 keys or a JWKS {"keys": [...]}; each key a public JWK
(kty "OKP", crv "Ed25519", x; kid by the kid rule, alg "EdDSA", use "sig" optional) or
{"pem": "-----BEGIN PUBLIC KEY-----…"}. Every key is checked before any request: a private key,
another key type, a malformed key, the same key twice or any other document is refused (exit 2)
and nothing is pinned. unpin removes PRODUCER's pin (removed, or absent when it had none): its
next signed record is refused; records already stored stay. PRODUCER is a URI outside urn:baton:.
list and get need an operator (or admin) token, pin and unpin an admin token.
--json  the API's answer as one JSON document: list {"producers":[P…]}; get P; pin
        {"status","pinned":P}; unpin {"producer","status"}, where P is {"producer","keys",
        "keysDigest","pinnedAt","pinnedBy"} (pinnedAt in epoch milliseconds).
${REMOTE_USAGE}
`;

type Values = Readonly<Record<string, string | boolean | undefined>>;

interface Verb {
  /** The flags it reads; any other given is refused, not ignored. */
  readonly flags: readonly string[];
  readonly arity: number;
  readonly shape: string;
  run(args: readonly string[], values: Values, io: CliIo): Promise<void>;
}

const SERVER = [...Object.keys(REMOTE_OPTIONS), 'json'];

function remote(v: Values): ReturnType<typeof adminClient> {
  const str = (name: string): string | undefined => {
    const value = v[name];
    return typeof value === 'string' ? value : undefined;
  };
  return adminClient({ url: str('url'), token: str('token') });
}

/** The producer argument, checked as the API checks it (a URI outside urn:baton:), before any request. */
function producerArg(args: readonly string[]): string {
  return readProducerId(args[0], 'PRODUCER');
}

function line(p: PinnedProducerSummary): string {
  const kids = p.keys.map((k) => k.kid).join(',');
  return `${p.producer}  ${kids}  ${formatRfc3339(p.pinnedAt)}  ${p.pinnedBy}\n`;
}

/** The keys of a keys file: a JSON array of keys, or a JWKS `{"keys": [...]}` and nothing else. */
function keysOf(document: JsonValue): { keys: JsonValue; path: string } {
  if (Array.isArray(document)) return { keys: document, path: '$' };
  if (
    typeof document === 'object' &&
    document !== null &&
    Object.keys(document).length === 1 &&
    Object.hasOwn(document, 'keys')
  )
    return { keys: document['keys'] ?? null, path: '$.keys' };
  throw new BatonError(
    'input_invalid',
    'must hold a JSON array of Ed25519 public keys or a JWKS {"keys": [...]}, nothing else',
    { path: '$' },
  );
}

/**
 * FILE's keys, checked by the server's own reader, in kid order: its refusal keeps its code
 * (`input_invalid`, `key_invalid`, `key_unsupported`, `json_*`; all exit 2) and names the file.
 */
async function readKeysFile(file: string, io: CliIo): Promise<Ed25519PublicJwk[]> {
  try {
    const { keys, path } = keysOf(await readJsonInput(file, io));
    return readProducerKeys(keys, path, 'input_invalid');
  } catch (error) {
    // `usage` (the file cannot be read) and `json_*` (with the position) name the file already.
    if (!isBatonError(error) || error.code === 'usage' || error.code.startsWith('json_')) throw error;
    throw new BatonError(error.code, `${file}: ${error.message}`, error.details, { cause: error });
  }
}

function answer(io: CliIo, v: Values, json: unknown, text: string): void {
  if (v['json'] === true) printJson(io, json);
  else io.stdout(text);
}

const VERBS: Readonly<Record<string, Verb>> = {
  list: {
    flags: SERVER,
    arity: 0,
    shape: 'producers list',
    run: async (_args, v, io) => {
      const producers = await remote(v).listContinuityProducers();
      answer(io, v, { producers }, producers.map(line).join(''));
    },
  },
  get: {
    flags: SERVER,
    arity: 1,
    shape: 'producers get PRODUCER',
    run: async (args, v, io) => {
      const producer = producerArg(args);
      // The API lists pins (producer ids are URIs, too colon-laden for a path segment); one is picked here.
      const pinned = (await remote(v).listContinuityProducers()).find((p) => p.producer === producer);
      if (pinned === undefined)
        throw new BatonError('not_found', `producer ${producer} has no pinned keys`, { producer });
      answer(io, v, pinned, line(pinned));
    },
  },
  pin: {
    flags: [...SERVER, 'keys'],
    arity: 1,
    shape: 'producers pin PRODUCER --keys FILE',
    run: async (args, v, io) => {
      const producer = producerArg(args);
      const file = v['keys'];
      if (typeof file !== 'string') throw new BatonError('usage', 'pin needs --keys FILE');
      const keys = await readKeysFile(file, io);
      const done = await remote(v).pinContinuityProducer(producer, keys);
      io.stderr(`producer ${producer}: ${done.status}\n`);
      answer(io, v, done, line(done.pinned));
    },
  },
  unpin: {
    flags: SERVER,
    arity: 1,
    shape: 'producers unpin PRODUCER',
    run: async (args, v, io) => {
      const done = await remote(v).unpinContinuityProducer(producerArg(args));
      answer(io, v, done, `${done.producer}  ${done.status}\n`);
    },
  },
};

export async function runProducers(argv: string[], io: CliIo): Promise<number> {
  if (wantsHelp(argv)) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  try {
    const { values, positionals } = parse({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: { ...REMOTE_OPTIONS, keys: { type: 'string' }, json: { type: 'boolean' } },
    });
    const [name, ...args] = positionals;
    const verb = name !== undefined && Object.hasOwn(VERBS, name) ? VERBS[name] : undefined;
    if (verb === undefined)
      throw new BatonError('usage', `expected one of: ${Object.keys(VERBS).join(', ')}`);
    onlyFlags(values, verb.flags, `producers ${name ?? ''}`);
    if (args.length !== verb.arity) throw new BatonError('usage', `expected: ${verb.shape}`);
    await verb.run(args, values, io);
    return EXIT.ok;
  } catch (error) {
    return reportError(error, io);
  }
}

export const producersCommand: Command = {
  name: 'producers',
  verbs: Object.keys(VERBS),
  summary: 'List, show, pin and unpin continuity producers’ Ed25519 keys over the HTTP API.',
  usage: USAGE,
  run: runProducers,
};
