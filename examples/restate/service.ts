/**
 * A Restate service whose payment runs in `ctx.run` through Baton (or, with
 * BATON_EXAMPLE_MODE=without, straight to the provider). Started twice by run.ts: the first
 * process is SIGKILLed inside `ctx.run`, after the provider applied the payment and before Restate
 * journaled the result; Restate retries the invocation against the restarted process, which
 * replays the journal and runs the closure again.
 */
import './node20.js';
import * as restate from '@restatedev/restate-sdk';
import {
  openBatonWorker,
  payWithBaton,
  payWithoutBaton,
  type BatonWorker,
  type Paid,
} from '../support/payments.js';

const mode = process.env['BATON_EXAMPLE_MODE'] === 'without' ? 'without' : 'with';
let baton: BatonWorker | undefined;

const pay = (invoice: string): Promise<Paid> =>
  baton === undefined ? payWithoutBaton(invoice) : payWithBaton(baton, invoice);

const payments = restate.service({
  name: 'payments',
  handlers: {
    payInvoice: async (ctx: restate.Context, invoice: string): Promise<Paid> =>
      ctx.run('pay', () => pay(invoice)),
  },
});

async function main(): Promise<void> {
  if (mode === 'with') baton = await openBatonWorker();
  const port = await restate.serve({
    services: [payments],
    port: Number(process.env['BATON_EXAMPLE_SERVICE_PORT']),
  });
  process.stdout.write(`listening ${port} generation ${baton?.executor.generation ?? 'none'}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `restate service: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
