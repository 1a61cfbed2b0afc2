/**
 * The "ceiling gateway" of the MCP bench (issue 15 §7): a child process that is the least a gateway
 * doing Baton's job must be, run the way `baton mcp` runs (its own idle node process, its own event
 * loop, the sandbox across a process boundary), so its added p50 against direct is the honest floor:
 * - a pass-through MCP proxy (SDK Server downstream over stdio or Streamable HTTP, SDK Client
 *   upstream over stdio or HTTP, as `baton mcp` is) that, per `pay`:
 * - commits one row durably BEFORE the call is sent (AOC-REQ-010), plain SQL: BEGIN IMMEDIATE, one
 *   INSERT, COMMIT on the bench's SQLite file, WAL + synchronous = FULL as Baton's store;
 * - forwards the call, then asks the pinned status source for this call's key over a keep-alive
 *   HTTP pool, signature checked (AOC-REQ-009: only an authenticated source's answer may settle),
 *   through the same StatusSources code the gateway uses, and fails the call unless it is found and
 *   verified (fail closed);
 * - commits the settlement (one UPDATE) durably, then answers.
 * Nothing else: no Baton service, no schema, no evidence chain, no occurrence logic.
 *
 *   node dist/bench/mcp-ceiling-gateway.js CONFIG.json   (CeilingGatewayConfig; BATON_HMAC_SECRETS in env)
 */
import { readFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { hmacSecretsMap } from '../src/cli/commands/serve-credentials.js';
import { serveHttp, serveStdio } from '../src/mcp/serve.js';
import { connectUpstream, listTools, type Upstream, type UpstreamSpec } from '../src/mcp/upstream.js';
import type { OccurrenceView, ProviderProfile } from '../src/occurrences/index.js';
import { staticKeys, StatusSources } from '../src/providers/index.js';
import { plainCommits } from './plain-commits.js';

export interface CeilingGatewayConfig {
  readonly db: string;
  /** The registered profile and one settled occurrence's view: the lookup's template (its key is replaced). */
  readonly profile: ProviderProfile;
  readonly occurrence: OccurrenceView;
  readonly upstream: UpstreamSpec;
  /** Serve Streamable HTTP on 127.0.0.1 (first stdout line: {"url": ...}) instead of stdio. */
  readonly http: boolean;
}

function statusCheck(cfg: CeilingGatewayConfig) {
  const sources = new StatusSources({ keys: staticKeys(hmacSecretsMap(process.env['BATON_HMAC_SECRETS'])) });
  const source = sources.applicable(cfg.profile, cfg.occurrence)[0];
  if (source === undefined) throw new Error('the profile pins no usable status source');
  return async (key: string): Promise<void> => {
    const o = { ...cfg.occurrence, provider: { ...cfg.occurrence.provider, nativeKey: key } };
    const { observation } = await sources.query(cfg.profile, o, source.id);
    if (observation.result !== 'found' || !observation.authentication.verified)
      throw new Error(`status source: ${observation.result}, not a verified found`);
  };
}

function proxy(cfg: CeilingGatewayConfig, u: Upstream): () => Server {
  const commits = plainCommits(cfg.db);
  const status = statusCheck(cfg);
  return () => {
    const server = new Server({ name: 'ceiling-gateway', version: '0.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await listTools(u) }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const key = request.params.arguments?.['idempotency_key'];
      if (request.params.name !== 'pay' || typeof key !== 'string')
        return u.client.callTool(request.params, undefined, { signal: extra.signal });
      commits.enter(`gw:${key}`);
      const r = await u.client.callTool(request.params, undefined, { timeout: 60_000 });
      if (r.isError !== true) await status(key);
      commits.settle(`gw:${key}`);
      return r;
    });
    return server;
  };
}

async function main(): Promise<void> {
  const cfg = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as CeilingGatewayConfig;
  const u = await connectUpstream(cfg.upstream);
  const make = proxy(cfg, u);
  // Served by `baton mcp`'s own transports (src/mcp/serve.ts): the same per-request work.
  const sessions = { session: () => Promise.resolve({ server: make() }) };
  if (cfg.http) {
    const { url } = await serveHttp(sessions, 0, '127.0.0.1');
    process.stdout.write(`${JSON.stringify({ url })}\n`);
    return;
  }
  const { closed } = await serveStdio(sessions);
  await closed;
  await u.close();
  process.exit(0);
}

await main();
