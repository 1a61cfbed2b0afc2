/**
 * The gateway's upstream side: one SDK `Client` per upstream MCP server, reached by Streamable HTTP
 * (a URL) or stdio (a command the gateway starts). Tool, resource and prompt lists are read through
 * every page, so routing and the policy check at start see everything the upstream offers.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  Prompt,
  Resource,
  ResourceTemplate,
  ServerCapabilities,
  Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { BatonError } from '../core/errors.js';
import { perRequestSignalFetch } from './http-fetch.js';

export type UpstreamSpec =
  | { readonly name: string; readonly url: string }
  | {
      readonly name: string;
      readonly command: string;
      readonly args: readonly string[];
      /** The started upstream's whole environment; default `upstreamEnvironment(process.env)`. */
      readonly env?: Readonly<Record<string, string>>;
    };

/**
 * The environment a stdio upstream is started with: the gateway's own (the upstream's API key,
 * base URL, proxy settings), less Baton's secrets — every `BATON_*` variable (the operator token
 * the gateway polices the upstream with, BATON_HMAC_SECRETS…) and the variables `withheld` names
 * (what a `--credentials` document references: a status source's secret in the upstream's hands
 * could forge the authenticated reading that settles its own calls, AOC-REQ-009).
 */
export function upstreamEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  withheld: Iterable<string> = [],
): Record<string, string> {
  const drop = new Set(withheld);
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || name.toUpperCase().startsWith('BATON_') || drop.has(name)) continue;
    kept[name] = value;
  }
  return kept;
}

export interface Upstream {
  readonly name: string;
  readonly client: Client;
  readonly capabilities: ServerCapabilities;
  close(): Promise<void>;
}

export const GATEWAY_INFO = { name: 'baton-mcp-gateway', version: '0.1.0' } as const;

export async function connectUpstream(spec: UpstreamSpec): Promise<Upstream> {
  const client = new Client(GATEWAY_INFO, { capabilities: {} });
  const transport =
    'url' in spec
      ? new StreamableHTTPClientTransport(new URL(spec.url), { fetch: perRequestSignalFetch() })
      : new StdioClientTransport({
          command: spec.command,
          args: [...spec.args],
          // Explicit: the SDK's default passes only HOME, PATH, SHELL, TERM… (no API key, no base URL).
          env: spec.env ?? upstreamEnvironment(process.env),
          stderr: 'inherit',
        });
  try {
    await client.connect(transport);
  } catch (cause) {
    await client.close().catch(() => undefined);
    throw new BatonError(
      'mcp_upstream_invalid',
      `cannot connect to upstream ${spec.name}`,
      { upstream: spec.name },
      { cause },
    );
  }
  return {
    name: spec.name,
    client,
    capabilities: client.getServerCapabilities() ?? {},
    close: () => client.close(),
  };
}

/** Every page of a cursor-paged list. */
async function allPages<T>(
  page: (cursor: string | undefined) => Promise<{ items: T[]; next?: string }>,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 1000; i += 1) {
    const p = await page(cursor);
    items.push(...p.items);
    if (p.next === undefined) return items;
    cursor = p.next;
  }
  throw new BatonError('mcp_upstream_invalid', 'an upstream list did not end within 1000 pages');
}

export function listTools(u: Upstream): Promise<Tool[]> {
  if (u.capabilities.tools === undefined) return Promise.resolve([]);
  return allPages(async (cursor) => {
    const r = await u.client.listTools(cursor === undefined ? {} : { cursor });
    return { items: r.tools, ...(r.nextCursor === undefined ? {} : { next: r.nextCursor }) };
  });
}

export function listResources(u: Upstream): Promise<Resource[]> {
  if (u.capabilities.resources === undefined) return Promise.resolve([]);
  return allPages(async (cursor) => {
    const r = await u.client.listResources(cursor === undefined ? {} : { cursor });
    return { items: r.resources, ...(r.nextCursor === undefined ? {} : { next: r.nextCursor }) };
  });
}

export function listResourceTemplates(u: Upstream): Promise<ResourceTemplate[]> {
  if (u.capabilities.resources === undefined) return Promise.resolve([]);
  return allPages(async (cursor) => {
    const r = await u.client.listResourceTemplates(cursor === undefined ? {} : { cursor });
    return { items: r.resourceTemplates, ...(r.nextCursor === undefined ? {} : { next: r.nextCursor }) };
  });
}

export function listPrompts(u: Upstream): Promise<Prompt[]> {
  if (u.capabilities.prompts === undefined) return Promise.resolve([]);
  return allPages(async (cursor) => {
    const r = await u.client.listPrompts(cursor === undefined ? {} : { cursor });
    return { items: r.prompts, ...(r.nextCursor === undefined ? {} : { next: r.nextCursor }) };
  });
}
