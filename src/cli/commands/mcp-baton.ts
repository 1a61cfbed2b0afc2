/**
 * Which Baton `baton mcp` runs its occurrences on (docs/mcp.md "Where Baton runs"):
 * - `--baton URL`: a `baton serve` over HTTP, with an operator token (BATON_TOKEN / --token-file);
 * - `--db FILE` or `--postgres URL`: Baton's service in the gateway's own process, on the same
 *   store `baton serve` uses (issue 15 §7: no HTTP round trip to Baton per call). The status
 *   sources' secrets come from BATON_HMAC_SECRETS and `--credentials FILE` exactly as for serve.
 * In-process, the Mission gate needs `baton serve`'s mission consumer, which the gateway does not
 * run: a policy that binds a Mission is refused at start with a store (fail closed), never run
 * with its Mission unchecked.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { AdminClient, HttpBatonClient, InProcessBatonClient, type BatonClient } from '../../client/index.js';
import { BatonError } from '../../core/errors.js';
import {
  batonMissionGate,
  MISSIONS_NOT_ENFORCED,
  type McpPolicy,
  type ProfileCatalog,
  type MissionGate,
} from '../../mcp/index.js';
import { StatusSources } from '../../providers/index.js';
import { openBaton } from '../../server/index.js';
import { SCHEMA_WATCH_EVERY_MS } from '../../store/schema-watch.js';
import type { CliIo } from '../io.js';
import { serveSecrets } from './serve-credentials.js';
import { NEW_STORE, storeChoice } from './store-choice.js';

export interface GatewayBaton {
  readonly baton: BatonClient;
  readonly missions: MissionGate;
  /** What the log line names: a URL or the store (never a secret). */
  readonly description: string;
  /**
   * Variables besides BATON_* that hold Baton's secrets (those the --credentials document names):
   * never passed to a stdio upstream (upstreamEnvironment).
   */
  readonly secretEnv: readonly string[];
  /** The registered provider profiles, checked against the policy before the gateway starts. */
  readonly profiles: ProfileCatalog;
  close(): Promise<void>;
}

export interface BatonFlags {
  readonly baton?: string | undefined;
  readonly 'token-file'?: string | undefined;
  readonly db?: string | undefined;
  readonly postgres?: string | undefined;
  readonly 'domain-key'?: string | undefined;
  readonly credentials?: string | undefined;
}

async function token(file: string | undefined): Promise<string> {
  let text = process.env['BATON_TOKEN'];
  if (file !== undefined) {
    try {
      text = (await readFile(file, 'utf8')).trim();
    } catch (cause) {
      throw new BatonError('usage', `cannot read the token file ${file}`, { file }, { cause });
    }
  }
  if (text === undefined || text === '')
    throw new BatonError('usage', 'an operator token is required: BATON_TOKEN or --token-file');
  return text;
}

/** Usage only: which Baton the flags name, checked before anything is read or opened. */
export function checkBatonFlags(v: BatonFlags, policy?: McpPolicy): 'http' | 'store' {
  const store = v.db !== undefined || v.postgres !== undefined;
  if (v.baton !== undefined && store)
    throw new BatonError('usage', 'give --baton URL or a store (--db / --postgres), not both');
  if (!store) {
    if (v.baton === undefined || !URL.canParse(v.baton))
      throw new BatonError('usage', '--baton URL (or a store: --db FILE / --postgres URL) is required');
    if (v.credentials !== undefined || v['domain-key'] !== undefined)
      throw new BatonError('usage', '--credentials and --domain-key are for a store; baton serve holds them');
    return 'http';
  }
  if (v['token-file'] !== undefined)
    throw new BatonError('usage', '--token-file is for --baton; a store needs no token');
  for (const p of policy?.tools.values() ?? []) {
    if (p.mission !== null)
      throw new BatonError(
        'usage',
        `tool ${p.tool} binds a Mission: its check needs baton serve's mission consumer, use --baton URL`,
        { tool: p.tool },
      );
  }
  return 'store';
}

function versionsOf(
  id: string,
  listed: { profiles: readonly { id: string; version: string }[]; truncated: boolean },
): { versions: string[]; truncated: boolean } {
  const versions = listed.profiles.filter((p) => p.id === id).map((p) => p.version);
  return { versions, truncated: listed.truncated };
}

export async function openGatewayBaton(v: BatonFlags, policy: McpPolicy, io: CliIo): Promise<GatewayBaton> {
  if (checkBatonFlags(v, policy) === 'http') {
    const baseUrl = v.baton ?? '';
    const secret = await token(v['token-file']);
    const admin = new AdminClient({ baseUrl, token: secret });
    return {
      baton: new HttpBatonClient({ baseUrl, token: secret }),
      missions: batonMissionGate(admin),
      profiles: {
        getProfile: (id, version) => admin.getProfile(id, version),
        versions: async (id) => versionsOf(id, await admin.listProfiles()),
      },
      description: `Baton at ${new URL(baseUrl).origin}`,
      secretEnv: [],
      close: () => Promise.resolve(),
    };
  }
  // baton mcp reads no BATON_DOMAIN_KEY (docs/operations.md "Environment"): name its flag only.
  const choice = storeChoice(
    { db: v.db, postgres: v.postgres, 'domain-key': v['domain-key'] },
    { fromEnvironment: false },
  );
  // A new SQLite file has no domain and no profile, so the start-time profile check would refuse
  // it anyway — after bringing a database (and its domain key) into being. Refused first instead.
  if (choice.kind === 'sqlite' && !existsSync(choice.path))
    throw new BatonError('usage', `no database at ${choice.path}${NEW_STORE}`, { path: choice.path });
  const { keys, envNames } = await serveSecrets(v.credentials, io);
  const opened = await openBaton(choice, {
    domainKeyHint: '--domain-key FILE',
    mustExist: true,
    // Long-running: a newer Baton migrating the shared store turns every call into a refusal.
    watchSchemaEveryMs: SCHEMA_WATCH_EVERY_MS,
  });
  return {
    baton: new InProcessBatonClient({
      service: opened.service,
      statusSources: new StatusSources({ keys }),
      actor: 'mcp-gateway',
    }),
    // No tool binds a Mission (checked above): nothing for a gate to check.
    missions: MISSIONS_NOT_ENFORCED,
    profiles: {
      getProfile: (id, version) => opened.service.getProfile(id, version),
      versions: async (id) => {
        const listed = await opened.service.listProfiles();
        return versionsOf(id, { profiles: [...listed.items], truncated: listed.truncated });
      },
    },
    description: `Baton in this process on ${opened.description}`,
    secretEnv: envNames,
    close: () => opened.close(),
  };
}
