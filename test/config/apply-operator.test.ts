/**
 * docs/config.md: an operator token suffices for a config whose admin-only items are unchanged, and
 * an admin-only item it would need is refused `forbidden`, naming the items, before any write. The
 * `tokens` section is one an operator cannot even compare (listing tokens is admin-only): its items
 * are refused by name, never skipped. And a tokens file that could not be written (a leftover
 * FILE.partial) is refused before a token is minted. A REAL server on 127.0.0.1, real tokens.
 */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startApi } from '../server/helpers.js';
import { baton, exampleConfig, startSandbox, tempDir, writeConfig } from './support.js';

test('an operator re-applying the example names the tokens it cannot compare, and writes nothing', async (t) => {
  const api = await startApi(t);
  const sandbox = await startSandbox(t);
  const dir = tempDir(t);
  const file = writeConfig(dir, exampleConfig(sandbox.url));
  const applied = await baton(['apply', file, '--url', api.url, '--token', api.admin]);
  assert.equal(applied.code, 0, applied.err);
  const before = await api.snapshot();

  const r = await baton(['apply', file, '--url', api.url, '--token', api.operator]);
  assert.equal(r.code, 1, r.out);
  assert.equal(r.out, '');
  assert.match(
    r.err,
    /^error: forbidden: nothing applied: token first-call-operator need an admin token \(tokens are listed and minted by an admin only\)$/m,
  );
  assert.equal(await api.snapshot(), before);
});

test('an operator applying an unchanged domain and new profiles-free authorities needs no admin', async (t) => {
  const api = await startApi(t);
  const dir = tempDir(t);
  const config = exampleConfig('http://127.0.0.1:9');
  const base = { format: 'baton.config/1', domain: config['domain'] };
  assert.equal(
    (await baton(['apply', writeConfig(dir, base), '--url', api.url, '--token', api.admin])).code,
    0,
  );
  const more = { ...base, authorities: [{ id: 'op-budget', unit: 'usd_cents', total: 10 }] };
  const r = await baton([
    'apply',
    writeConfig(dir, more, 'b.json'),
    '--url',
    api.url,
    '--token',
    api.operator,
  ]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^domain first-call: unchanged$/m);
  assert.match(r.out, /^authority op-budget: created$/m);

  // A new token and a changed domain together: both named, nothing written.
  const before = await api.snapshot();
  const domain = config['domain'] as { limits: object };
  const both = {
    ...more,
    domain: { ...domain, limits: { ...domain.limits, maxPendingPerLineage: 3 } },
    tokens: { create: [{ name: 'ci', role: 'operator' }] },
  };
  const refused = await baton([
    'apply',
    writeConfig(dir, both, 'c.json'),
    '--url',
    api.url,
    '--token',
    api.operator,
  ]);
  assert.equal(refused.code, 1);
  assert.match(
    refused.err,
    /^error: forbidden: nothing applied: domain first-call, token ci need an admin token/m,
  );
  assert.equal(await api.snapshot(), before);
});

test('a leftover tokens-file .partial is refused before any token is minted', async (t) => {
  const api = await startApi(t);
  const dir = tempDir(t);
  const file = writeConfig(dir, {
    format: 'baton.config/1',
    tokens: { create: [{ name: 'ci', role: 'operator' }] },
  });
  const good = join(dir, 'good.json');
  writeFileSync(`${good}.partial`, '');
  const listed = async (): Promise<unknown> =>
    (await api.call('GET', '/v1/tokens', { token: api.admin })).body['tokens'];
  const before = await listed();
  const r = await baton(['apply', file, '--url', api.url, '--token', api.admin, '--tokens-file', good]);
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /^error: usage: cannot write .*good\.json: .*good\.json\.partial exists already/m);
  assert.doesNotMatch(r.out, /btk\./, 'no token minted, none shown');
  assert.deepEqual(await listed(), before, 'nothing minted on the server');
  assert.ok(!existsSync(good));
});
