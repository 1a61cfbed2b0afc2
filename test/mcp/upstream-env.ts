/**
 * A REAL stdio upstream MCP server that reports the environment it was started with: its one tool
 * `environment` answers the variable names it sees and the values of those the test asks for. Run
 * as a script by `baton mcp --upstream-stdio` (test/mcp/upstream-env.test.ts).
 */
import { fileURLToPath } from 'node:url';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export interface ReportedEnvironment {
  readonly names: string[];
  readonly values: Record<string, string | null>;
}

function envServer(): Server {
  const server = new Server({ name: 'test-env', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      {
        name: 'environment',
        description: 'Report the environment',
        inputSchema: { type: 'object' as const, properties: { ask: { type: 'array' } } },
        annotations: { readOnlyHint: true },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const ask = request.params.arguments?.['ask'];
    const values: Record<string, string | null> = {};
    for (const name of Array.isArray(ask) ? ask : [])
      values[String(name)] = process.env[String(name)] ?? null;
    const report: ReportedEnvironment = { names: Object.keys(process.env).sort(), values };
    return { content: [{ type: 'text', text: JSON.stringify(report) }], structuredContent: { ...report } };
  });
  return server;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) void envServer().connect(new StdioServerTransport());
