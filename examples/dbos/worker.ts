/**
 * A DBOS Transact workflow whose payment step goes through Baton (or, with
 * BATON_EXAMPLE_MODE=without, calls the provider directly). Started twice by run.ts: the first
 * process is SIGKILLed inside the step, after the provider applied the payment and before DBOS
 * recorded the step; the second process's DBOS.launch() recovers the workflow and re-runs the step.
 */
import { DBOS } from '@dbos-inc/dbos-sdk';
import {
  openBatonWorker,
  payWithBaton,
  payWithoutBaton,
  type BatonWorker,
  type Paid,
} from '../support/payments.js';

const mode = process.env['BATON_EXAMPLE_MODE'] === 'without' ? 'without' : 'with';
const invoice = process.env['BATON_EXAMPLE_INVOICE'] ?? 'inv-1';
let baton: BatonWorker | undefined;

// The step DBOS re-runs when it has no recorded result for it. No retries: a failure is reported.
const pay = DBOS.registerStep(
  async (inv: string): Promise<Paid> =>
    baton === undefined ? payWithoutBaton(inv) : payWithBaton(baton, inv),
  { name: 'pay', retriesAllowed: false },
);

const payInvoice = DBOS.registerWorkflow(async (inv: string): Promise<Paid> => pay(inv), {
  name: 'payInvoice',
});

async function main(): Promise<void> {
  DBOS.setConfig({
    name: 'baton-dbos-example',
    systemDatabaseUrl: process.env['BATON_EXAMPLE_DBOS_URL'],
    logLevel: 'error',
  });
  if (mode === 'with') baton = await openBatonWorker();
  await DBOS.launch(); // recovers this executor's pending workflows: the re-run happens here
  const handle = await DBOS.startWorkflow(payInvoice, { workflowID: `pay-${invoice}` })(invoice);
  const result = await handle.getResult();
  process.stdout.write(
    `${JSON.stringify({ mode, generation: baton?.executor.generation ?? null, result })}\n`,
  );
  await DBOS.shutdown();
  await baton?.close();
}

main().catch((error: unknown) => {
  process.stderr.write(
    `dbos worker: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
