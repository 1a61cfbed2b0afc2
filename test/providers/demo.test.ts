/**
 * `baton demo` as a real process (compiled: node dist/src/cli/main.js; from source: through tsx):
 * it spawns worker processes, SIGKILLs one after a payment, and must end with exactly one effect
 * per invoice and the unsigned case unresolved — read from its own output.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { spawnNode } from '../support/child.js';

const fromTs = import.meta.url.endsWith('.ts');
const main = fileURLToPath(new URL(`../../src/cli/main.${fromTs ? 'ts' : 'js'}`, import.meta.url));

/** The demo takes seconds; a hung one fails here with its output (test/support/child.ts). */
const DEMO_DEADLINE_MS = 180_000;

async function runDemo(): Promise<{ code: number | null; out: string }> {
  const args = fromTs ? ['--import', 'tsx', main, 'demo'] : [main, 'demo'];
  const child = spawnNode('baton demo', args);
  const { code } = await child.waitForExit(DEMO_DEADLINE_MS);
  return { code, out: `${child.lines.join('\n')}\n${child.stderr()}` };
}

test('baton demo: the successor never pays twice; the unsigned case stays unresolved; exit 0', async (t) => {
  const { code, out } = await runDemo();
  assert.equal(code, 0, out);
  const counts: Record<string, number> = {};
  for (const m of out.matchAll(/^effects (invoice-\d): (\d+)/gm)) counts[m[1] ?? ''] = Number(m[2]);
  assert.deepEqual(counts, {
    'invoice-1': 1,
    'invoice-2': 1,
    'invoice-3': 1,
    'invoice-4': 1,
    'invoice-5': 1,
    'invoice-6': 1,
  });
  assert.equal((out.match(/SIGKILL → worker pid/g) ?? []).length, 2, 'two workers were killed');
  assert.match(out, /invoice-2: already handled \(resolved, success\) — not paying again/);
  assert.match(out, /invoice-5: already entered, outcome UNRESOLVED \(unauthenticated\) — NOT paying again/);
  assert.match(out, /invoice-5 stays unresolved: unauthenticated/);
  t.diagnostic(`checked ${Object.keys(counts).length} invoices`);
});
