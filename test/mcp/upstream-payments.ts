/**
 * A REAL upstream MCP server written for the gateway tests: a "payments" MCP server whose `pay` tool
 * calls the sandbox provider (src/providers/sandbox, which counts effects per key: the oracle) with
 * the native idempotency key it is given, and whose `payment_status` tool reads the sandbox's status
 * by key. `echo`, a resource and a prompt are non-consequential and must pass through unchanged.
 * Served over Streamable HTTP in the test process, or over stdio when run as a script
 * (`node upstream-payments.js SANDBOX_URL`).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  isInitializeRequest,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';

export const ACCOUNT = 'acct_sandbox';

/** What a test can make the upstream do to the next `pay` calls. */
export interface UpstreamControl {
  /** Apply the payment, then never answer (the gateway's answer is lost). */
  hangAfterApply: number;
  /** Never answer and never apply the payment (the provider never hears of it). */
  hangBeforeApply: number;
  /** Wait this long before calling the sandbox. */
  delayMs: number;
  /** Every `tools/call` the upstream received, by tool name (the gateway's sends). */
  readonly calls: Record<string, number>;
  /** The `_meta` of the last `tools/call` (what the gateway forwarded). */
  lastMeta?: Record<string, unknown>;
  /** Resolves each time a payment was applied during a hang. */
  onHang?: () => void;
  /** While a hanging payment is being applied, `payment_status` waits for it (no race with timeouts). */
  applying?: Promise<void>;
  /** The `pay` tool `tools/list` offers instead of PAY_TOOL (another input schema). */
  payTool?: Tool;
  /** The `payment_status` tool `tools/list` offers instead of the read-only one. */
  statusTool?: Tool;
  /** `resources/read` is answered with a JSON-RPC error (InvalidParams) instead of contents. */
  readError?: boolean;
  /** How many `tools/list` requests the upstream answered (the gateway's listings). */
  lists: number;
  /** Every session's server: a test sends `notifications/tools/list_changed` through them. */
  readonly servers: Set<Server>;
}

export const PAY_TOOL: Tool = {
  name: 'pay',
  description: 'Pay an invoice',
  inputSchema: {
    type: 'object' as const,
    properties: {
      amount: { type: 'integer' },
      currency: { type: 'string' },
      payee: { type: 'string' },
      invoice: { type: 'string' },
      idempotency_key: { type: 'string' },
    },
    required: ['amount', 'currency', 'payee', 'invoice', 'idempotency_key'],
  },
};

export const TOOLS: Tool[] = [
  PAY_TOOL,
  {
    name: 'payment_status',
    description: 'Read a payment by idempotency key',
    inputSchema: {
      type: 'object' as const,
      properties: { idempotency_key: { type: 'string' } },
      required: ['idempotency_key'],
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'echo',
    description: 'Echo text back',
    inputSchema: { type: 'object' as const, properties: { text: { type: 'string' } } },
    annotations: { readOnlyHint: true },
  },
];

function text(result: object, isError = false): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(result) }],
    structuredContent: result as Record<string, unknown>,
    isError,
  };
}

async function pay(
  sandboxUrl: string,
  control: UpstreamControl,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  const { idempotency_key: key, ...body } = args;
  if (typeof key !== 'string') return text({ error: 'idempotency_key is required' }, true);
  if (control.hangBeforeApply > 0) {
    control.hangBeforeApply -= 1;
    return new Promise<never>(() => undefined);
  }
  if (control.delayMs > 0) await new Promise((r) => setTimeout(r, control.delayMs));
  let applied = (): void => undefined;
  if (control.hangAfterApply > 0) control.applying = new Promise((resolve) => (applied = resolve));
  const res = await fetch(`${sandboxUrl}/v1/accounts/${ACCOUNT}/payments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  const answer = (await res.json()) as Record<string, unknown>;
  applied();
  if (control.hangAfterApply > 0) {
    control.hangAfterApply -= 1;
    control.onHang?.();
    return new Promise<never>(() => undefined);
  }
  return text(answer, res.status >= 400);
}

async function status(
  sandboxUrl: string,
  control: UpstreamControl,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  await control.applying;
  const key = encodeURIComponent(String(args['idempotency_key']));
  const res = await fetch(`${sandboxUrl}/v1/accounts/${ACCOUNT}/payments/by-key/${key}`);
  return text((await res.json()) as object, res.status >= 400);
}

export function paymentsServer(sandboxUrl: string, control: UpstreamControl): Server {
  const server = new Server(
    { name: 'test-payments', version: '1.0.0' },
    { capabilities: { tools: {}, resources: {}, prompts: {} } },
  );
  control.servers.add(server);
  server.onclose = () => void control.servers.delete(server);
  server.setRequestHandler(ListToolsRequestSchema, () => {
    control.lists += 1;
    return {
      tools: TOOLS.map((tool) =>
        tool.name === 'pay'
          ? (control.payTool ?? tool)
          : tool.name === 'payment_status'
            ? (control.statusTool ?? tool)
            : tool,
      ),
    };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name } = request.params;
    control.calls[name] = (control.calls[name] ?? 0) + 1;
    control.lastMeta = request.params._meta;
    const args = request.params.arguments ?? {};
    if (name === 'pay') return pay(sandboxUrl, control, args);
    if (name === 'payment_status') return status(sandboxUrl, control, args);
    if (name === 'echo')
      return { content: [{ type: 'text', text: String(args['text']) }], _meta: { echoed: true } };
    throw new Error(`unknown tool ${name}`);
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: [{ uri: 'docs://terms', name: 'terms', mimeType: 'text/plain' }],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    if (control.readError === true) throw new McpError(ErrorCode.InvalidParams, 'no such resource');
    return {
      contents: [{ uri: request.params.uri, mimeType: 'text/plain', text: `terms of ${request.params.uri}` }],
    };
  });
  server.setRequestHandler(ListPromptsRequestSchema, () => ({
    prompts: [{ name: 'greeting', description: 'Say hello' }],
  }));
  server.setRequestHandler(GetPromptRequestSchema, () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'hello from upstream' } }],
  }));
  return server;
}

/** `notifications/tools/list_changed` to every connected session (the gateway's), as an upstream whose tools changed sends it. */
export async function toolsChanged(control: UpstreamControl): Promise<void> {
  await Promise.all([...control.servers].map((s) => s.sendToolListChanged()));
}

export function newControl(): UpstreamControl {
  return { hangAfterApply: 0, hangBeforeApply: 0, delayMs: 0, calls: {}, lists: 0, servers: new Set() };
}

/**
 * The upstream over Streamable HTTP on 127.0.0.1:`port` (default any free port; one server per
 * session, as the SDK expects). An unknown session id is answered 404 as the MCP spec has it: a
 * restarted upstream (same port, new process) tells the gateway its session is gone.
 */
export async function serveUpstreamHttp(
  sandboxUrl: string,
  control: UpstreamControl,
  port = 0,
): Promise<{ url: string; close(): Promise<void> }> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let body: unknown;
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    }
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? sessions.get(id) : undefined;
    if (known !== undefined) return known.handleRequest(req, res, body);
    if (typeof id === 'string') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }),
      );
      return;
    }
    if (!isInitializeRequest(body)) {
      res.writeHead(400).end();
      return;
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => void sessions.set(sid, transport),
    });
    await paymentsServer(sandboxUrl, control).connect(transport);
    await transport.handleRequest(req, res, body);
  };
  const server = createServer((req, res) => void handle(req, res).catch(() => res.writeHead(500).end()));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}/mcp`,
    close: async () => {
      await Promise.allSettled([...sessions.values()].map((t) => t.close()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// Run as a script: the upstream over stdio (argv[2] names the sandbox).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const url = process.argv[2] ?? '';
  void paymentsServer(url, newControl()).connect(new StdioServerTransport());
}
