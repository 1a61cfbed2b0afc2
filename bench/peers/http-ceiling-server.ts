/**
 * The HTTP ceiling's server on SQLite (bench/peers/http-ceiling.ts), a child process: the peer
 * job's two Baton calls as plain SQL behind a bare node:http server (http-ceiling-serve.ts),
 * nothing else — no evidence canonicalisation beyond the floor's, no signature check.
 *   POST /ce?w=W&n=N   the floor's create and enter transactions, as one transaction
 *   POST /as?w=W&n=N   the status query to the provider (by idempotency key, keep-alive), then the
 *                      floor's observe transaction
 * Group commit: the floor's (bench/floor.ts SqliteBatchFloor: the transactions of one event-loop
 * turn share one COMMIT), on a file opened as the engine opens its writer (WAL, synchronous=FULL).
 *   node dist/bench/peers/http-ceiling-server.js DB SANDBOX_ORIGIN WORKERS
 */
import { pooledRequest } from '../../src/client/http-pool.js';
import { DEFAULT_ACCOUNT } from '../../src/providers/index.js';
import { floorScripts, openSqliteFloor, type FloorExecutor } from '../floor.js';
import { serveCeiling } from './http-ceiling-serve.js';

const [path = '', origin = '', workers = '16'] = process.argv.slice(2);
const floor = await openSqliteFloor(path, Number(workers));

function* createAndEnter(x: FloorExecutor, id: string, n: number) {
  yield* floorScripts.create('', x, id, `k-${n}`, n);
  yield* floorScripts.enter('', x, id);
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

serveCeiling(
  {
    ce: async (w, n, input) => {
      const id = `occ_ceiling_${n}`;
      await floor.batch.run(createAndEnter(floor.executor(w), id, n));
      return { occurrence: { id, phase: 'entered' }, ticket: { occurrenceId: id, request: input } };
    },
    as: async (_w, n) => {
      const id = `occ_ceiling_${n}`;
      const answer = await status(`ceiling-http-${n}`);
      await floor.batch.run(
        floorScripts.observe('', id, typeof answer['id'] === 'string' ? answer['id'] : `pay_${n}`),
      );
      return { occurrence: { id, outcome: 'success' }, status: answer };
    },
  },
  () => floor.close(),
);
