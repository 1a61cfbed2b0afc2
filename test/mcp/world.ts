/**
 * The gateway tests' world, all real: the sandbox provider (the effect oracle) on 127.0.0.1:0, a
 * SQLite Baton store with the sandbox profile registered, Baton's HTTP server (src/server) on
 * 127.0.0.1:0 with its status sources, an operator token, the test upstream MCP server over
 * Streamable HTTP, and a policy file. Gateways are in-process (SDK InMemoryTransport downstream) or
 * `baton mcp` child processes on stdio.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { HttpBatonClient } from '../../src/client/index.js';
import { systemClock, type Clock } from '../../src/core/clock.js';
import type { JsonObject } from '../../src/core/json.js';
import {
  parsePolicy,
  startGateway,
  type Gateway,
  type GatewayOptions,
  type UpstreamSpec,
} from '../../src/mcp/index.js';
import { buildServer, createToken } from '../../src/server/index.js';
import { AUTHORITY, openStore, startSandbox, type Provider, type Store } from '../client/support.js';
import { newControl, serveUpstreamHttp, type UpstreamControl } from './upstream-payments.js';

export const LINEAGE = 'payments-agent';

export interface World {
  readonly dir: string;
  readonly provider: Provider;
  readonly store: Store;
  readonly batonUrl: string;
  readonly token: string;
  readonly upstreamUrl: string;
  readonly control: UpstreamControl;
  readonly policy: JsonObject;
  readonly policyFile: string;
  baton(): HttpBatonClient;
}

export function policyFor(profile: { id: string; version: string }, extra: JsonObject = {}): JsonObject {
  return {
    format: 'baton.mcp-policy/1',
    lineage: LINEAGE,
    tools: {
      pay: {
        provider: { profileId: profile.id, profileVersion: profile.version },
        creationKey: { from: 'arguments', pointers: ['/invoice'] },
        nativeKey: { to: 'argument', pointer: '/idempotency_key' },
        authority: { id: AUTHORITY, amount: { pointer: '/amount' } },
        acknowledgement: { status: '/status', reference: '/reference' },
        settle: {
          readTool: { name: 'payment_status', arguments: { idempotency_key: { from: 'nativeKey' } } },
        },
        ...extra,
      },
    },
  };
}

/** `clock`: Baton's time, store and HTTP server alike (default the system clock). */
export async function makeWorld(
  t: TestContext,
  options: { total?: number; harness?: boolean; clock?: Clock } = {},
): Promise<World> {
  const clock = options.clock ?? systemClock;
  const dir = mkdtempSync(join(tmpdir(), 'baton-mcp-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const provider = await startSandbox(t);
  const store = await openStore(t, provider, options.total ?? 100_000, clock);
  const app = buildServer({
    engine: store.engine,
    service: store.service,
    keys: provider.keys,
    clock,
    secretScope: { dirs: [dir] }, // test/mcp/missions.test.ts keeps its client key there
    // The Mission consumer and harness (test/mcp/missions.test.ts); off for the other tests.
    ...(options.harness === true && { harness: store.harness }),
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  const { port } = app.server.address() as AddressInfo;
  const { token } = await createToken(store.engine, { role: 'operator' }, { clock, actor: 'test' });
  const control = newControl();
  const upstream = await serveUpstreamHttp(provider.sandbox.url, control);
  t.after(() => upstream.close());
  const policy = policyFor(provider.profile);
  const policyFile = join(dir, 'policy.json');
  writeFileSync(policyFile, JSON.stringify(policy, null, 2));
  const batonUrl = `http://127.0.0.1:${port}`;
  return {
    dir,
    provider,
    store,
    batonUrl,
    token,
    upstreamUrl: upstream.url,
    control,
    policy,
    policyFile,
    baton: () => new HttpBatonClient({ baseUrl: batonUrl, token }),
  };
}

/** An in-process gateway in front of the world's HTTP upstream, and an SDK client on it. */
export async function inProcessGateway(
  t: TestContext,
  w: World,
  extra: Partial<GatewayOptions & { upstreams: readonly UpstreamSpec[] }> = {},
): Promise<{ gateway: Gateway; client: Client }> {
  const gateway = await startGateway({
    baton: w.baton(),
    policy: parsePolicy(JSON.stringify(w.policy)),
    upstreams: [{ name: 'payments', url: w.upstreamUrl }],
    upstreamTimeoutMs: 5_000,
    ...extra,
  });
  t.after(() => gateway.close());
  return { gateway, client: await connectSession(t, gateway) };
}

export async function connectSession(t: TestContext, gateway: Gateway): Promise<Client> {
  const session = await gateway.session();
  const [down, up] = InMemoryTransport.createLinkedPair();
  await session.server.connect(up);
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(down);
  t.after(() => client.close());
  return client;
}

const fromTs = import.meta.url.endsWith('.ts');
export const MAIN = fileURLToPath(new URL(`../../src/cli/main.${fromTs ? 'ts' : 'js'}`, import.meta.url));
export const UPSTREAM_SCRIPT = fileURLToPath(
  new URL(`./upstream-payments.${fromTs ? 'ts' : 'js'}`, import.meta.url),
);
export const ENV_UPSTREAM_SCRIPT = fileURLToPath(
  new URL(`./upstream-env.${fromTs ? 'ts' : 'js'}`, import.meta.url),
);

/**
 * How a child gateway reaches Baton: `baton serve`'s HTTP API with the operator token, or Baton's
 * service in the gateway's own process on the world's SQLite file, with the sandbox's HMAC secret
 * in BATON_HMAC_SECRETS as `baton serve` would read it.
 */
export type BatonAt = 'http' | 'store';

function batonFlags(w: World, at: BatonAt): { args: string[]; env: Record<string, string> } {
  if (at === 'http') return { args: ['--baton', w.batonUrl], env: { BATON_TOKEN: w.token } };
  const hmac = w.provider.sandbox.pins().find((p) => p.kind === 'hmac');
  if (hmac?.kind !== 'hmac') throw new Error('the test sandbox signs with HMAC');
  const secret = `${hmac.secretId}=${Buffer.from(hmac.secret).toString('base64url')}`;
  return { args: ['--db', w.store.path], env: { BATON_HMAC_SECRETS: secret } };
}

/**
 * `baton mcp` as a child process on stdio, as an agent's MCP client config would start it; `more`
 * adds flags and environment variables (the agent runtime's `env`).
 */
export async function childGateway(
  t: TestContext,
  w: World,
  upstream: string[] = ['--upstream', `payments=${w.upstreamUrl}`],
  at: BatonAt = 'http',
  more: { args?: string[]; env?: Record<string, string> } = {},
): Promise<{ client: Client; transport: StdioClientTransport }> {
  const baton = batonFlags(w, at);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      MAIN,
      'mcp',
      '--policy',
      w.policyFile,
      ...baton.args,
      '--upstream-timeout-ms',
      '5000',
      ...upstream,
      ...(more.args ?? []),
    ],
    env: { PATH: process.env['PATH'] ?? '', ...baton.env, ...more.env },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(transport, { timeout: 20_000 });
  t.after(() => client.close());
  return { client, transport };
}

/** A `pay` call's arguments as an agent sends them (no idempotency key: Baton supplies it). */
export function payArgs(invoice: string, amount = 1_250): JsonObject {
  return { amount, currency: 'eur', payee: 'acme-supplies', invoice };
}

export function nativeKeyOf(meta: unknown): string {
  const m = meta as { 'baton/occurrence'?: { id?: string } } | undefined;
  return m?.['baton/occurrence']?.id ?? '';
}
