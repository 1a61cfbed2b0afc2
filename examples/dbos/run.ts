/**
 * Baton inside a DBOS Transact step (docs/integrations.md): the same crash, twice — once without
 * Baton, once with it — and the provider's own effect counter for each. Needs PostgreSQL for DBOS's
 * system database (BATON_TEST_POSTGRES_URL, else postgres://postgres@127.0.0.1:5432/postgres).
 * Exits 0 only when the crash without Baton paid twice and with Baton exactly once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchDatabase } from '../../src/store/postgres-scratch.js';
import { EXAMPLE_ENV } from '../support/payments.js';
import { runProcess, startWorld } from '../support/world.js';

const WORKER = join(import.meta.dirname, 'worker.js');
const PG = process.env['BATON_TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DEADLINE_MS = 60_000;

async function scenario(mode: 'with' | 'without', print: (l: string) => void): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), `baton-dbos-${mode}-`));
  const world = await startWorld(dir);
  const dbos = await createScratchDatabase(PG, 'dbos_example');
  try {
    const env = { ...world.env, BATON_EXAMPLE_MODE: mode, BATON_EXAMPLE_DBOS_URL: dbos.url };
    const first = await runProcess(WORKER, { ...env, [EXAMPLE_ENV.crashAfter]: 'inv-1' }, DEADLINE_MS);
    if (first.signal !== 'SIGKILL') throw new Error(`the first worker was not killed: ${first.stderr}`);
    print(
      `${mode} Baton: worker killed (SIGKILL) after the provider applied the payment; effects so far: ${world.effects()}`,
    );
    const second = await runProcess(WORKER, env, DEADLINE_MS);
    if (second.code !== 0) throw new Error(`the recovering worker failed: ${second.stderr}`);
    print(`${mode} Baton: DBOS recovered the workflow and re-ran the step: ${second.stdout.trim()}`);
    return world.effects();
  } finally {
    await world.close();
    await dbos.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runDbosExample(
  print: (l: string) => void = console.log,
): Promise<{ without: number; with: number }> {
  const without = await scenario('without', print);
  const withBaton = await scenario('with', print);
  print(`without Baton: ${without} effects, with Baton: ${withBaton} effect${withBaton === 1 ? '' : 's'}`);
  return { without, with: withBaton };
}

if (process.argv[1] === import.meta.filename) {
  runDbosExample().then(
    (r) => process.exit(r.without === 2 && r.with === 1 ? 0 : 1),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
