/**
 * examples/stripe-client/README.md "Run it", run VERBATIM: the fenced block is read from the
 * README (so drift fails this test) and run with bash in a scratch copy of the clone (symlinks to
 * dist, src, node_modules, profiles; its own examples/stripe-client/ and database), on the
 * README's ports. It starts the Stripe-compatible sandbox, a Baton server that pins the shipped
 * Stripe profile to it (`pinToSandbox`) with the secrets from `--credentials`, and pays one
 * invoice: the result line must say `succeeded` and the sandbox's effect list — the oracle — must
 * hold exactly one effect for its native key; the same invoice again sends nothing. Every process
 * the block started is killed afterwards (its process group).
 */
import assert from 'node:assert/strict';
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { repoRoot } from '../support/paths.js';
import { bashGroup, portFree, readmeBlock, scratchClone, type Finished } from './support.js';

const SANDBOX = 'http://127.0.0.1:4160';
const ADMIN = 'readme-test-stripe-admin-token';
const DEADLINE_MS = 180_000;
const EXAMPLE = join(repoRoot, 'examples', 'stripe-client');

/** A scratch clone with its own examples/stripe-client/ (no tokens file from an earlier run). */
function workspace(t: TestContext): string {
  const dir = scratchClone(t, 'baton-readme-stripe-');
  cpSync(EXAMPLE, join(dir, 'examples', 'stripe-client'), { recursive: true });
  rmSync(join(dir, 'examples', 'stripe-client', 'stripe-client.tokens.json'), { force: true });
  return dir;
}

function bash(t: TestContext, cwd: string, script: string): Promise<Finished> {
  return bashGroup(t, cwd, ['-c', script], { BATON_SANDBOX_ADMIN_TOKEN: ADMIN }, DEADLINE_MS);
}

function resultLine(out: string): Record<string, unknown> {
  const line = out
    .split('\n')
    .filter((l) => l.startsWith('{"invoice"'))
    .pop();
  assert.ok(line !== undefined, `a result line in:\n${out}`);
  return JSON.parse(line) as Record<string, unknown>;
}

async function effectsFor(nativeKey: string): Promise<number> {
  const r = await fetch(`${SANDBOX}/admin/effects`, { headers: { authorization: `Bearer ${ADMIN}` } });
  assert.equal(r.status, 200);
  const { effects } = (await r.json()) as { effects: { idempotency_key: string }[] };
  return effects.filter((e) => e.idempotency_key === nativeKey).length;
}

test(
  'examples/stripe-client/README.md "Run it", verbatim: the profile pinned from the shell, one payment, one effect',
  { timeout: DEADLINE_MS * 2 },
  async (t) => {
    for (const port of [4160, 4161]) assert.ok(await portFree(port), `port ${port} (the README's) is in use`);
    const dir = workspace(t);
    const block = readmeBlock(join(EXAMPLE, 'README.md'), 'Run it');
    const run = await bash(t, dir, block);
    assert.equal(run.code, 0, `${run.out}\n${run.err}`);
    const paid = resultLine(run.out);
    assert.deepEqual(
      [paid['invoice'], paid['status'], paid['phase'], paid['effect'], paid['adapterCalls']],
      ['inv-1', 'succeeded', 'resolved', 'occurred', 1],
    );
    assert.equal(await effectsFor(String(paid['nativeKey'])), 1, 'the sandbox applied exactly one effect');

    // The same invoice again, with the block's environment: the original, and nothing sent.
    const env = block.split('\n')[0] ?? '';
    const again = await bash(t, dir, `${env}\nnpx tsx examples/stripe-client/run.ts inv-1`);
    assert.equal(again.code, 0, again.err);
    const re = resultLine(again.out);
    assert.deepEqual(
      [re['adapterCalls'], re['reason'], re['occurrenceId']],
      [0, 'existing_resolved', paid['occurrenceId']],
    );
    assert.equal(await effectsFor(String(paid['nativeKey'])), 1, 'still one effect');
  },
);
