/**
 * The HTTP ceiling's server (bench/peers/http-ceiling.ts), a child process: the peer job's two
 * Baton calls as plain SQL behind a bare node:http server, nothing else — no framework, no schema
 * validation, no authentication, no evidence canonicalisation beyond the floor's, no signature check.
 *   POST /ce?w=W&n=N   the floor's create and enter transactions, as one transaction
 *   POST /as?w=W&n=N   the status query to the provider (by idempotency key, keep-alive), then the
 *                      floor's observe transaction
 * Group commit: the floor's (bench/floor.ts SqliteBatchFloor: the transactions of one event-loop
 * turn share one COMMIT), on a file opened as the engine opens its writer (WAL, synchronous=FULL).
 *   node dist/bench/peers/http-ceiling-server.js DB SANDBOX_ORIGIN WORKERS
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { pooledRequest } from '../../src/client/http-pool.js';
import { DEFAULT_ACCOUNT } from '../../src/providers/index.js';
import { floorScripts, openSqliteFloor, type FloorExecutor } from '../floor.js';

const [path = '', origin = '', workers = '16'] = process.argv.slice(2);
const floor = await openSqliteFloor(path, Number(workers));

function* createAndEnter(x: FloorExecutor, id: string, n: number) {
  yield* floorScripts.create('', x, id, `k-${n}`, n);
  yield* floorScripts.enter('', x, id);
}

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function status(key: string): Promise<Record<string, unknown>> {
  const url = new URL(`${origin}/v1/accounts/${DEFAULT_ACCOUNT}/payments/by-key/${encodeURIComponent(key)}`);
  const answer = await pooledRequest(url, {
    method: 'GET',
    headers: {},
    body: undefined,
    signal: AbortSignal.timeout(30_000),
    maxBytes: 1 << 20,
  });
  return JSON.parse(Buffer.from(answer.bytes).toString('utf8')) as Record<string, unknown>;
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://ceiling');
  const w = Number(url.searchParams.get('w'));
  const n = Number(url.searchParams.get('n'));
  const id = `occ_ceiling_${n}`;
  const input = await body(req);
  let out: unknown;
  if (url.pathname === '/ce') {
    await floor.batch.run(createAndEnter(floor.executor(w), id, n));
    out = { occurrence: { id, phase: 'entered' }, ticket: { occurrenceId: id, request: input } };
  } else {
    const answer = await status(`ceiling-http-${n}`);
    await floor.batch.run(
      floorScripts.observe('', id, typeof answer['id'] === 'string' ? answer['id'] : `pay_${n}`),
    );
    out = { occurrence: { id, outcome: 'success' }, status: answer };
  }
  const text = JSON.stringify(out);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const server = createServer((req, res) => {
  handle(req, res).catch((error: unknown) => {
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
  floor.close();
  process.exit(0);
});
