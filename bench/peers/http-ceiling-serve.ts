/**
 * What the HTTP ceilings' servers share (http-ceiling-server.ts on SQLite, http-folded-server.ts on
 * PostgreSQL): a bare node:http server on loopback with the peer job's two calls, nothing else — no
 * framework, no schema validation, no authentication layer.
 *   POST /ce?w=W&n=N   create-and-enter for executor W's job N
 *   POST /as?w=W&n=N   acknowledge-and-settle for the same job
 * It prints `ceiling listening on PORT` once listening (http-ceiling.ts waits for that line) and
 * stops on SIGTERM.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/** One call's work: what the job's numbers and the request body ask, answered as JSON. */
export type CeilingCall = (w: number, n: number, input: unknown) => Promise<unknown>;

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function handle(
  calls: { readonly ce: CeilingCall; readonly as: CeilingCall },
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://ceiling');
  const w = Number(url.searchParams.get('w'));
  const n = Number(url.searchParams.get('n'));
  const input = await body(req);
  const call = url.pathname === '/ce' ? calls.ce : url.pathname === '/as' ? calls.as : undefined;
  if (call === undefined) {
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('no such call');
    return;
  }
  const text = JSON.stringify(await call(w, n, input));
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Serve the two calls until SIGTERM, then `close` what they hold and exit. */
export function serveCeiling(
  calls: { readonly ce: CeilingCall; readonly as: CeilingCall },
  close: () => unknown,
): void {
  const server = createServer((req, res) => {
    handle(calls, req, res).catch((error: unknown) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(error));
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    console.log(`ceiling listening on ${typeof address === 'object' && address ? address.port : 0}`);
  });
  process.on('SIGTERM', () => {
    server.close();
    void Promise.resolve(close()).finally(() => process.exit(0));
  });
}
