/**
 * `baton mcp`: the MCP gateway (docs/mcp.md). Speaks MCP to the agent on stdio (default) or
 * Streamable HTTP (--http), and MCP to one or more upstream servers; consequential tools (the policy's)
 * run under Baton occurrences through Baton's HTTP API (--baton) or Baton's service in this process
 * on the store itself (--db / --postgres; mcp-baton.ts). On stdio, stdout is the MCP channel: this
 * command writes nothing else there; its log goes to stderr.
 */
import { readFile } from 'node:fs/promises';
import { importEd25519PublicKey } from '../../core/ed25519.js';
import { BatonError } from '../../core/errors.js';
import { keyRing, type KeyResolver } from '../../leases/index.js';
import {
  checkPolicyProfiles,
  isLoopbackAddress,
  parsePolicy,
  serveHttp,
  serveStdio,
  startGateway,
  upstreamEnvironment,
  DEFAULT_UPSTREAM_TIMEOUT_MS,
  MIN_UPSTREAM_TIMEOUT_MS,
  type UpstreamSpec,
} from '../../mcp/index.js';
import { parseOptions, reportError, untilStopped, wantsHelp, type Command } from '../command.js';
import { EXIT, type CliIo } from '../io.js';
import { checkBatonFlags, openGatewayBaton, type GatewayBaton } from './mcp-baton.js';

const USAGE = `usage: baton mcp --policy FILE (--baton URL | --db FILE | --postgres URL [--domain-key FILE])
                 (--upstream [NAME=]URL | --upstream-stdio [NAME=]COMMAND)...
                 [--http PORT [--http-token-file FILE] [--host H] [--allowed-host NAME]...
                  [--allowed-origin ORIGIN]...]
                 [--lease-key PUBLIC.pem]... [--upstream-timeout-ms MS] [--credentials FILE]

Run the MCP gateway: an MCP server in front of upstream MCP servers. Tools, resources and prompts pass
through; the tools the policy marks consequential run create -> enter -> upstream call with Baton's
native key -> settle, so a repeated call returns the original outcome and is never sent twice.
Each MCP session takes over the policy's lineage as a new executor generation.

  --policy FILE            the tool policy (baton.mcp-policy/1, strict JSON; docs/mcp.md)
  --baton URL              Baton's HTTP API (baton serve), e.g. http://127.0.0.1:4000; the operator
                           token comes from BATON_TOKEN or --token-file
  --token-file FILE        read the operator token from FILE instead of BATON_TOKEN
  --db FILE                instead of --baton: run Baton's service in this process on the SQLite
                           database FILE baton serve uses; it must exist (baton migrate or baton
                           serve creates it; the gateway never creates a store): no HTTP round
                           trip to Baton per call. No token; a policy binding a Mission is refused
                           (its check needs baton serve's mission consumer)
  --postgres URL           the same on a PostgreSQL database
  --domain-key FILE        with --postgres: the domain key file the database's servers share
                           (default ./baton.domain-key.pem)
  --credentials FILE       with a store: the baton.credentials/1 document of the status sources'
                           secrets, as for baton serve (BATON_HMAC_SECRETS is read too)
  --upstream [NAME=]URL    an upstream MCP server over Streamable HTTP (repeatable)
  --upstream-stdio [NAME=]COMMAND
                           an upstream MCP server the gateway starts, talking stdio; COMMAND is split
                           on spaces, no shell (repeatable). It inherits this environment except
                           Baton's secrets: every BATON_* variable (BATON_TOKEN…) and every variable
                           the --credentials document names
  --http PORT              serve Streamable HTTP at http://HOST:PORT/mcp (0: any free port; prints one
                           JSON line with the url) instead of stdio. Without a clients' bearer, every
                           process on this machine that reaches the port can open a session (retiring
                           the live agent's generation) and make consequential calls under Baton's
                           credential
  --http-token-file FILE   with --http: the clients' bearer (default: $BATON_MCP_HTTP_TOKEN, at least
                           16 characters); every request must carry Authorization: Bearer <it>, else
                           401 and nothing happens
  --host H                 the address for --http (default 127.0.0.1); one that is not loopback needs
                           --http-token-file (or $BATON_MCP_HTTP_TOKEN)
  --allowed-host NAME      with --http: a Host name requests may carry besides the loopback names and
                           H (repeatable); any other Host is refused 403 before anything happens
  --allowed-origin ORIGIN  with --http: a browser Origin allowed besides those on an allowed host
                           (repeatable, exact, e.g. https://agent.example)
  --lease-key PUBLIC.pem   an Ed25519 public key trusted to sign PTCL leases in _meta.compensationLease
                           (repeatable); without one, a call carrying a lease is refused
  --upstream-timeout-ms MS how long a consequential call waits for the upstream before its answer
                           counts as lost (default ${DEFAULT_UPSTREAM_TIMEOUT_MS}; at least
                           ${MIN_UPSTREAM_TIMEOUT_MS}, at most 3600000)
`;

export const MCP_OPTIONS = {
  policy: { type: 'string' },
  baton: { type: 'string' },
  'token-file': { type: 'string' },
  upstream: { type: 'string', multiple: true },
  'upstream-stdio': { type: 'string', multiple: true },
  http: { type: 'string' },
  'http-token-file': { type: 'string' },
  host: { type: 'string' },
  'allowed-host': { type: 'string', multiple: true },
  'allowed-origin': { type: 'string', multiple: true },
  'lease-key': { type: 'string', multiple: true },
  'upstream-timeout-ms': { type: 'string' },
  db: { type: 'string' },
  postgres: { type: 'string' },
  'domain-key': { type: 'string' },
  credentials: { type: 'string' },
} as const;

function named(text: string, index: number): { name: string; rest: string } {
  const m = /^([A-Za-z0-9][A-Za-z0-9._-]{0,63})=(.+)$/s.exec(text);
  return m === null
    ? { name: `upstream-${index + 1}`, rest: text }
    : { name: m[1] as string, rest: m[2] as string };
}

function upstreams(http: readonly string[], stdio: readonly string[]): UpstreamSpec[] {
  const specs: UpstreamSpec[] = [];
  for (const text of http) {
    const { name, rest } = named(text, specs.length);
    if (!URL.canParse(rest) || !/^https?:$/.test(new URL(rest).protocol)) {
      throw new BatonError('usage', '--upstream must be an http(s) URL');
    }
    specs.push({ name, url: rest });
  }
  for (const text of stdio) {
    const { name, rest } = named(text, specs.length);
    const [command, ...args] = rest.split(' ').filter((s) => s !== '');
    if (command === undefined) throw new BatonError('usage', '--upstream-stdio needs a command');
    specs.push({ name, command, args });
  }
  if (specs.length === 0)
    throw new BatonError('usage', 'at least one --upstream or --upstream-stdio is required');
  return specs;
}

function whole(text: string | undefined, name: string, fallback: number, max: number, min = 0): number {
  if (text === undefined) return fallback;
  if (!/^[0-9]{1,9}$/.test(text) || Number(text) > max || Number(text) < min)
    throw new BatonError(
      'usage',
      min === 0
        ? `--${name} must be a whole number up to ${max}`
        : `--${name} must be a whole number from ${min} to ${max}`,
    );
  return Number(text);
}

async function readText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (cause) {
    throw new BatonError('usage', `cannot read the ${what} file ${file}`, { file }, { cause });
  }
}

async function leaseKeys(files: readonly string[]): Promise<KeyResolver | undefined> {
  if (files.length === 0) return undefined;
  const keys = [];
  for (const f of files) keys.push(importEd25519PublicKey({ pem: await readText(f, 'lease key') }));
  return keyRing(keys);
}

function parse(argv: string[]) {
  return parseOptions({ args: argv, options: MCP_OPTIONS, strict: true, allowPositionals: false }).values;
}

/** --host, --allowed-host, --allowed-origin and the bearer shape the --http server: without it, refused. */
function checkHttpFlags(v: ReturnType<typeof parse>): void {
  if (v.http !== undefined) return;
  const stray = (['host', 'http-token-file', 'allowed-host', 'allowed-origin'] as const).find(
    (f) => v[f] !== undefined,
  );
  if (stray !== undefined) throw new BatonError('usage', `--${stray} is for --http (stdio has no address)`);
}

/**
 * The clients' bearer for --http (--http-token-file, else BATON_MCP_HTTP_TOKEN), or none. None is
 * refused for an address that is not loopback: anyone reaching it could take over the lineage and
 * spend the authority under the gateway's credential.
 */
async function httpBearer(v: ReturnType<typeof parse>): Promise<string | undefined> {
  const file = v['http-token-file'];
  const bearer =
    file === undefined ? process.env['BATON_MCP_HTTP_TOKEN'] : (await readText(file, 'http token')).trim();
  // A bearer is one header token: with a space inside, no client could ever present it.
  if (bearer !== undefined && (bearer.length < 16 || /\s/.test(bearer)))
    throw new BatonError(
      'usage',
      "--http-token-file: the clients' bearer must be at least 16 characters, without white space",
    );
  const host = v.host ?? '127.0.0.1';
  if (bearer === undefined && !isLoopbackAddress(host))
    throw new BatonError(
      'usage',
      `--host ${host} is not a loopback address: give --http-token-file FILE (or BATON_MCP_HTTP_TOKEN), the bearer every client must present`,
    );
  return bearer;
}

export async function runMcp(argv: string[], io: CliIo, stop?: AbortSignal): Promise<number> {
  if (wantsHelp(argv)) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  const log = (line: string): void => io.stderr(`${line}\n`);
  let gateway;
  let http;
  let where: GatewayBaton | undefined;
  try {
    const v = parse(argv);
    if (v.policy === undefined) throw new BatonError('usage', '--policy FILE is required');
    checkBatonFlags(v);
    checkHttpFlags(v);
    // Usage first: nothing is read, connected or taken over before every flag is known good.
    const specs = upstreams(v.upstream ?? [], v['upstream-stdio'] ?? []);
    const timeoutMs = whole(
      v['upstream-timeout-ms'],
      'upstream-timeout-ms',
      DEFAULT_UPSTREAM_TIMEOUT_MS,
      3_600_000,
      MIN_UPSTREAM_TIMEOUT_MS,
    );
    const port = v.http === undefined ? undefined : whole(v.http, 'http', 0, 65535);
    const bearer = port === undefined ? undefined : await httpBearer(v);
    const policy = parsePolicy(
      await readFile(v.policy).catch((cause: unknown) => {
        throw new BatonError('usage', `cannot read ${v.policy}`, {}, { cause });
      }),
    );
    for (const p of policy.tools.values()) {
      if (p.mission !== null)
        log(
          `mcp: tool ${p.tool}: its Mission (_meta["${p.mission.meta}"]) is checked at Baton before every call`,
        );
    }
    const keys = await leaseKeys(v['lease-key'] ?? []);
    where = await openGatewayBaton(v, policy, io);
    log(`mcp: occurrences on ${where.description}`);
    await checkPolicyProfiles(policy, where.profiles);
    const env = upstreamEnvironment(process.env, where.secretEnv);
    gateway = await startGateway({
      baton: where.baton,
      policy,
      upstreams: specs.map((s) => ('command' in s ? { ...s, env } : s)),
      leaseKeys: keys,
      missions: where.missions,
      upstreamTimeoutMs: timeoutMs,
      log,
    });
    if (port === undefined) {
      const { closed } = await serveStdio(gateway);
      log(`mcp: serving stdio for ${policy.tools.size} consequential tool(s)`);
      await Promise.race([closed, untilStopped(stop)]);
    } else {
      http = await serveHttp(gateway, port, v.host ?? '127.0.0.1', log, {
        allowedHosts: (v['allowed-host'] ?? []).map((h) => h.toLowerCase()),
        allowedOrigins: v['allowed-origin'] ?? [],
        ...(bearer === undefined ? {} : { bearer }),
      });
      io.stdout(`${JSON.stringify({ url: http.url, lineage: policy.lineage })}\n`);
      log(`mcp: serving ${http.url} (SIGINT or SIGTERM stops it)`);
      await untilStopped(stop);
    }
  } catch (error) {
    await gateway?.stop();
    await http?.close();
    await gateway?.close();
    await where?.close();
    return reportError(error, io);
  }
  // Running consequential calls are finished and recorded before the agents' sessions, the
  // upstreams and Baton's client are closed (docs/mcp.md "Stopping").
  log('mcp: stopping: waiting for running consequential calls');
  await gateway.stop();
  await http?.close();
  await gateway.close();
  await where.close();
  log('mcp: stopped');
  return EXIT.ok;
}

export const mcpCommand: Command = {
  name: 'mcp',
  summary: 'Run the MCP gateway: consequential tool calls under occurrences, everything else passed through.',
  usage: USAGE,
  run: (argv, io) => runMcp(argv, io),
};
