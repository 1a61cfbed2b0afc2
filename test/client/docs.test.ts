/**
 * docs/client.md against what the SDK does: every `unresolved` reason its table lists is one
 * perform produces (src/client/perform.ts), and every ProviderCall example sends the ticket's own
 * request under the ticket's native key, refusing when there is none — never `nativeKey ??
 * undefined`, which sends with no idempotency key at all.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../support/paths.js';

const read = (...path: string[]): string => readFileSync(join(repoRoot, ...path), 'utf8');

test('every `unresolved` reason docs/client.md lists is one perform produces', () => {
  const row = read('docs', 'client.md')
    .split('\n')
    .find((line) => line.startsWith('| `unresolved` |'));
  assert.ok(row !== undefined, 'the result table has an `unresolved` row');
  const reasons = [...row.matchAll(/`([a-z]+_[a-z_]+)`/g)]
    .map((m) => m[1] ?? '')
    .filter((r) => r !== 'unresolved');
  assert.ok(reasons.length >= 5, reasons.join());
  const perform = read('src', 'client', 'perform.ts');
  // existing_<phase> is built from the occurrence's phase; every other reason is a literal.
  const produced = (r: string): boolean =>
    perform.includes(`'${r}'`) ||
    (/^existing_(entered|resolved|released)$/.test(r) && perform.includes('`existing_${o.phase}`'));
  assert.deepEqual(
    reasons.filter((r) => !produced(r)),
    [],
    'reasons the table lists that perform never produces',
  );
});

test('every ProviderCall example sends ticket.request under the ticket native key, or refuses', () => {
  const places: [string, string][] = [
    ['docs/client.md', read('docs', 'client.md')],
    ['examples/stripe-client/README.md', read('examples', 'stripe-client', 'README.md')],
    ['examples/stripe-client/pay.ts', read('examples', 'stripe-client', 'pay.ts')],
    ['src/client/adapter.ts', read('src', 'client', 'adapter.ts')],
  ];
  const rules: [RegExp, boolean, string][] = [
    [/nativeKey \?\? undefined/, false, 'sends with no idempotency key when the ticket has none'],
    [/idempotencyKey: t(icket)?\.nativeKey \}/, true, "sends under the ticket's native key"],
    [/if \(t(icket)?\.nativeKey === null\)\s*\{?\s*throw/, true, 'refuses when the ticket has no key'],
    [/t(icket)?\.request as /, true, "sends the ticket's request"],
  ];
  const broken = places.flatMap(([where, text]) =>
    rules.filter(([re, wanted]) => re.test(text) !== wanted).map(([, , rule]) => `${where}: ${rule}`),
  );
  assert.deepEqual(broken, []);
});
