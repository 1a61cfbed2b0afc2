/**
 * `baton tokens create|list|revoke`: the admin/operator bearer tokens of the HTTP API, managed
 * directly on the store (no server needed; docs/api.md "Authentication"). The secret is printed
 * once, alone on stdout, and only its SHA-256 digest is stored. Executors get no token here: their
 * credential comes from a takeover (AOC-REQ-006).
 */
import { existsSync } from 'node:fs';
import { systemClock } from '../../core/clock.js';
import { BatonError } from '../../core/errors.js';
import { formatRfc3339 } from '../../core/time.js';
import { createToken, isPrincipalRole, readTokenInput } from '../../server/tokens.js';
import type { StoreEngine } from '../../store/engine.js';
import { listTokens, revokeToken, type TokenRecord } from '../../store/principals.js';
import type { JsonObject } from '../../core/json.js';
import { printJson, reportError, wantsHelp, type Command } from '../command.js';
import { EXIT, type CliIo } from '../io.js';
import { parse } from './store-args.js';
import { NEW_STORE, openMigratedEngine, STORE_OPTIONS, STORE_USAGE, storeChoice } from './store-choice.js';

const USAGE = `usage: baton tokens create --role operator|admin [--name NAME] [store] [--json]
       baton tokens list [store] [--json]
       baton tokens revoke ID [store] [--json]

Manage the bearer tokens of the HTTP API. create prints the new token once on stdout (keep it: only
its digest is stored). revoke is immediate and idempotent. Roles: admin (tokens, domain
configuration, and everything an operator may), operator (takeover, authorities, profiles,
queries, evidence). Executor credentials come from a takeover, not from here. Each works on an
existing store: a SQLite --db that does not exist is refused, never created (baton serve sets a
store up and prints its first admin token; baton migrate creates an empty one).
--json  one JSON document: create {"token","id","role","name"}; list {"tokens":[T…]}; revoke T,
        where T is {"id","role","name","createdAt","revokedAt"} (RFC 3339 times, revokedAt null
        while active). Never a secret but the one create returns.
${STORE_USAGE}
`;

const ACTOR = 'cli:tokens';

/** The verbs `runTokens` branches on (test/cli/verbs.test.ts checks them against its usage). */
const TOKENS_VERBS: readonly string[] = ['create', 'list', 'revoke'];

function tokenJson(t: TokenRecord): JsonObject {
  return {
    id: t.id,
    role: t.role,
    name: t.name,
    createdAt: formatRfc3339(t.createdAt),
    revokedAt: t.revokedAt === null ? null : formatRfc3339(t.revokedAt),
  };
}

function line(t: TokenRecord): string {
  const state = t.revokedAt === null ? 'active' : `revoked ${formatRfc3339(t.revokedAt)}`;
  return `${t.id}  ${t.role.padEnd(8)}  ${formatRfc3339(t.createdAt)}  ${state}  ${t.name}\n`;
}

export async function runTokens(argv: string[], io: CliIo): Promise<number> {
  if (wantsHelp(argv)) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  try {
    const { values, positionals } = parse({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        ...STORE_OPTIONS,
        role: { type: 'string' },
        name: { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    const [action, ...rest] = positionals;
    const arity = action === 'revoke' ? 1 : 0;
    if (!TOKENS_VERBS.includes(action ?? '') || rest.length !== arity) {
      throw new BatonError('usage', 'expected: create --role R | list | revoke ID');
    }
    if (action !== 'create' && (values.role !== undefined || values.name !== undefined)) {
      throw new BatonError('usage', '--role and --name belong to create');
    }
    // A create that would be refused is refused before a database is brought into being.
    if (action === 'create') readTokenInput({ role: roleOf(values.role), name: values.name });
    const choice = storeChoice(values);
    // None brings a SQLite database into being: a mistyped --db would get a token minted into a
    // new file that no server serves. A store is set up by `baton serve` (or `baton migrate`).
    if (choice.kind === 'sqlite' && !existsSync(choice.path)) {
      const how = action === 'create' ? NEW_STORE : '';
      throw new BatonError('usage', `no database at ${choice.path}${how}`, { path: choice.path });
    }
    const engine = await openMigratedEngine(choice);
    try {
      return await act(engine, action ?? '', rest[0], values, io);
    } finally {
      await engine.close();
    }
  } catch (error) {
    return reportError(error, io);
  }
}

/** `--role`, which create needs: operator or admin (usage otherwise). */
function roleOf(role: string | undefined): string {
  if (role === undefined || !isPrincipalRole(role)) {
    throw new BatonError(
      'usage',
      'create needs --role operator|admin (executors get credentials by takeover)',
    );
  }
  return role;
}

async function act(
  engine: StoreEngine,
  action: string,
  id: string | undefined,
  values: { role?: string; name?: string; json?: boolean },
  io: CliIo,
): Promise<number> {
  if (action === 'create') {
    const created = await createToken(
      engine,
      { role: roleOf(values.role), name: values.name },
      { clock: systemClock, actor: ACTOR },
    );
    io.stderr(`created ${created.role} token ${created.id} (${created.name}); the secret is shown once:\n`);
    if (values.json === true) {
      printJson(io, { token: created.token, id: created.id, role: created.role, name: created.name });
    } else io.stdout(`${created.token}\n`);
    return EXIT.ok;
  }
  if (action === 'list') {
    const tokens = await listTokens(engine);
    if (values.json === true) printJson(io, { tokens: tokens.map(tokenJson) });
    else for (const t of tokens) io.stdout(line(t));
    return EXIT.ok;
  }
  const revoked = await revokeToken(engine, id ?? '', systemClock.wallMs(), ACTOR);
  io.stdout(values.json === true ? `${JSON.stringify(tokenJson(revoked))}\n` : line(revoked));
  return EXIT.ok;
}

export const tokensCommand: Command = {
  name: 'tokens',
  verbs: TOKENS_VERBS,
  summary: 'Create, list and revoke the HTTP API’s admin and operator tokens.',
  usage: USAGE,
  run: runTokens,
};
