/**
 * The two peers of the bench (issue 16 §7), doing the payment job with their own durability:
 * DBOS Transact (workflow + one step, system database on PostgreSQL) and Restate (`ctx.run` in a
 * service invoked through a restate-server on loopback). Both run their SDK in this process.
 */
import '../../examples/restate/node20.js';
import { DBOS } from '@dbos-inc/dbos-sdk';
import * as restate from '@restatedev/restate-sdk';
import { freePort, restateBinary, startRestateServer } from '../../examples/restate/server.js';
import { pay, type Provider, type System } from './systems.js';
import { childCpuMs } from './procs.js';

let provider: Provider | undefined;

// DBOS: registered before launch; the step's payment key is the workflow's own id, so DBOS's
// recovery re-runs the step under the same key (the provider deduplicates it).
const dbosPay = DBOS.registerStep(
  async (n: number): Promise<void> => {
    if (provider === undefined) throw new Error('no provider');
    await pay(provider, `dbos-${n}`, n);
  },
  { name: 'pay', retriesAllowed: false },
);
const dbosJob = DBOS.registerWorkflow(async (n: number): Promise<void> => dbosPay(n), { name: 'payJob' });

export async function dbosSystem(p: Provider, systemDatabaseUrl: string): Promise<System> {
  provider = p;
  // DBOS's own default (60 s) set by the server at connection start, in the URL: without it, DBOS
  // queues a SET on each new pooled connection ahead of the borrower's query, which pg reports as
  // the deprecated "client.query() when the client is already executing a query" (pg@9 removes it).
  const url = new URL(systemDatabaseUrl);
  const options = url.searchParams.get('options');
  const idle = '-c idle_in_transaction_session_timeout=60000';
  url.searchParams.set('options', options === null ? idle : `${options} ${idle}`);
  DBOS.setConfig({ name: 'baton-peer-bench', systemDatabaseUrl: url.toString(), logLevel: 'error' });
  await DBOS.launch();
  return {
    name: 'DBOS Transact',
    job: async (_w, n) => {
      const handle = await DBOS.startWorkflow(dbosJob, { workflowID: `peer-${n}` })(n);
      await handle.getResult();
    },
    close: () => DBOS.shutdown(),
  };
}

/** Undefined (after one printed line) where the restate-server binary is not installed. */
export async function restateSystem(p: Provider, dir: string): Promise<System | undefined> {
  const binary = restateBinary();
  if (binary === undefined) {
    console.log(
      'Restate: skipped — the @restatedev/restate-server binary for this platform is not installed',
    );
    return undefined;
  }
  provider = p;
  const server = await startRestateServer(binary, dir);
  const service = restate.service({
    name: 'payments',
    handlers: {
      pay: async (ctx: restate.Context, n: number): Promise<void> => {
        const invocation = ctx.request().id;
        await ctx.run('pay', () => pay(p, `restate-${invocation}`, n));
      },
    },
  });
  const port = await freePort();
  // Not a line per invocation: the SDK reads RESTATE_LOGGING once, when it is imported (before this
  // runs), so its INFO lines are dropped by a transport of our own; warnings and errors still print.
  // (RestateLogLevel is a type-only export of the SDK: its values are compared as strings.)
  const loud: ReadonlySet<string> = new Set(['warn', 'error']);
  const logger: restate.LoggerTransport = (meta, message: unknown, ...rest: unknown[]) => {
    if (loud.has(String(meta.level))) console.error('[restate]', message, ...rest);
  };
  await restate.serve({ services: [service], port, logger });
  const registered = await fetch(`${server.admin}/deployments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ uri: `http://127.0.0.1:${port}` }),
  });
  if (registered.status >= 300)
    throw new Error(`Restate deployment: ${registered.status} ${await registered.text()}`);
  return {
    name: 'Restate',
    job: async (_w, n) => {
      const res = await fetch(`${server.ingress}/payments/pay`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': `peer-${n}` },
        body: JSON.stringify(n),
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`Restate ingress answered ${res.status}`);
    },
    childCpuMs: () => childCpuMs(server.pid),
    close: () => server.stop(),
  };
}
