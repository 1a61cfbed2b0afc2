/**
 * Baton inside the engines people already run (issue 13): a DBOS Transact workflow step and a
 * Restate `ctx.run`, each worker SIGKILLed after the provider applied the payment and before the
 * engine recorded the step. The engine re-runs the step; without Baton the provider's own effect
 * counter says 2, with Baton 1. Real DBOS on the local PostgreSQL, the real Restate server binary.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runDbosExample } from '../../examples/dbos/run.js';
import { runRestateExample } from '../../examples/restate/run.js';
import { restateBinary } from '../../examples/restate/server.js';
import { postgresTestUrl, probePostgres, redactUrl } from '../support/postgres.js';

const inCi = !['', '0', 'false'].includes(process.env['CI'] ?? '');

test('DBOS: the re-run step pays twice without Baton, once with Baton', { timeout: 240_000 }, async (t) => {
  const url = postgresTestUrl();
  const why = await probePostgres(url);
  if (why !== undefined && !inCi) {
    t.skip(`PostgreSQL not reachable at ${redactUrl(url)}: skipping the DBOS example`);
    return;
  }
  const lines: string[] = [];
  process.env['BATON_TEST_POSTGRES_URL'] = url;
  const result = await runDbosExample((l) => void lines.push(l));
  for (const l of lines) t.diagnostic(l);
  assert.deepEqual(result, { without: 2, with: 1 });
  assert.ok(lines.includes('without Baton: 2 effects, with Baton: 1 effect'));
});

test(
  'Restate: the retried ctx.run pays twice without Baton, once with Baton',
  { timeout: 240_000 },
  async (t) => {
    if (restateBinary() === undefined && !inCi) {
      t.skip(
        'the Restate server binary (@restatedev/restate-server) is not installed: skipping the Restate example',
      );
      return;
    }
    const lines: string[] = [];
    const result = await runRestateExample((l) => void lines.push(l));
    for (const l of lines) t.diagnostic(l);
    assert.deepEqual(result, { without: 2, with: 1 });
    assert.ok(lines.includes('without Baton: 2 effects, with Baton: 1 effect'));
  },
);
