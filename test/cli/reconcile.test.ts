/**
 * `baton reconcile` in-process against a real SQLite file and the REAL sandbox provider (HMAC
 * signed answers): occurrences entered and paid by an executor whose answer was never recorded are
 * resolved from the provider's signed status, never re-sent; unsigned status answers leave them
 * unresolved (exit 1, listed); bad arguments change nothing (exit 2).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import {
  createSandboxProvider,
  deployProfile,
  hmacSecretId,
  HttpProviderAdapter,
  loadProfile,
  sandboxDeployment,
  sandboxEntryUrl,
  staticKeys,
  type SandboxProvider,
} from '../../src/providers/index.js';
import { openOccurrencesOnSqlite } from '../../src/store/index.js';
import { domainConfig } from '../client/support.js';
import { runBaton } from './run.js';

function run(argv: string[], env: Record<string, string> = {}) {
  return runBaton(['reconcile', ...argv], env);
}

interface Paid {
  readonly path: string;
  readonly sandbox: SandboxProvider;
  readonly ids: readonly string[];
  readonly env: Record<string, string>;
}

/** `count` payments entered and sent by an executor that then died: no answer was recorded. */
async function paidButUnrecorded(t: TestContext, count: number): Promise<Paid> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-reconcile-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const secret = randomBytes(32);
  const sandbox = createSandboxProvider({ signing: 'hmac', hmacSecret: secret });
  await sandbox.listen(0, '127.0.0.1');
  t.after(() => sandbox.close());
  const profile = deployProfile(loadProfile('sandbox-payments'), sandboxDeployment(sandbox));
  const keys = staticKeys({ [hmacSecretId(secret)]: secret });
  const path = join(dir, 'baton.db');
  const store = await openOccurrencesOnSqlite(path);
  const ids: string[] = [];
  try {
    const svc = store.service;
    await svc.configureDomain(domainConfig() as never);
    await svc.registerProfile(JSON.parse(JSON.stringify(profile)));
    await svc.createAuthority({ id: 'payouts', unit: 'EUR-cents', total: 1_000_000 });
    const { credential } = await svc.takeover({ lineage: 'invoice-agent' });
    const adapter = new HttpProviderAdapter(profile, { entryUrl: sandboxEntryUrl(sandbox.url), keys });
    for (let i = 0; i < count; i++) {
      const c = await svc.create({
        credential,
        creationKey: `k-${i}`,
        provider: { profileId: profile.id, profileVersion: profile.version },
        request: { amount: 100 + i, currency: 'eur', payee: 'acme-supplies', invoice: `inv-${i}` },
        authority: { id: 'payouts', amount: 100 + i },
      });
      const ticket = await svc.enter({ credential, occurrenceId: c.occurrence.id });
      await adapter.send(ticket); // the answer is dropped: the worker "died" before recording it
      ids.push(c.occurrence.id);
    }
  } finally {
    await store.close();
  }
  return {
    path,
    sandbox,
    ids,
    env: { BATON_HMAC_SECRETS: `${hmacSecretId(secret)}=${secret.toString('base64url')}` },
  };
}

async function phases(path: string, ids: readonly string[]): Promise<string[]> {
  const store = await openOccurrencesOnSqlite(path);
  try {
    return await Promise.all(ids.map(async (id) => (await store.service.getOccurrence(id)).occurrence.phase));
  } finally {
    await store.close();
  }
}

test('baton reconcile resolves paid occurrences from the signed status, without re-sending', async (t) => {
  const paid = await paidButUnrecorded(t, 3);
  const effects = paid.sandbox.effects().length;
  const r = await run(['--db', paid.path], paid.env);
  assert.equal(r.code, 0, r.err + r.out);
  assert.match(r.out, /3 visited in 1 pass\(es\).*3 resolved, 0 still unresolved/);
  assert.equal(r.err.split('\n').filter((l) => / via .*: effective/.test(l)).length, 3, r.err);
  assert.deepEqual(await phases(paid.path, paid.ids), ['resolved', 'resolved', 'resolved']);
  assert.equal(paid.sandbox.effects().length, effects, 'no payment was sent again');
  const again = await run(['--db', paid.path, '--json'], paid.env);
  assert.equal(again.code, 0);
  assert.deepEqual(JSON.parse(again.out), {
    passes: 0,
    visited: 0,
    observations: 0,
    effective: 0,
    resolved: [],
    unresolved: [],
    byReason: {},
  });
});

test('baton reconcile: unverifiable or unsigned status answers resolve nothing; exit 1 lists what stays unresolved', async (t) => {
  const paid = await paidButUnrecorded(t, 2);
  // Without the HMAC secret the signed answers cannot be verified: nothing moves.
  const keyless = await run(['--db', paid.path, '--passes', '1']);
  assert.equal(keyless.code, 1, keyless.err + keyless.out);
  assert.deepEqual(await phases(paid.path, paid.ids), ['entered', 'entered']);
  // With the secret, but the provider's status answers come unsigned.
  paid.sandbox.addFault('all', 'unsigned');
  const r = await run(['--db', paid.path, '--passes', '2', '--lineage', 'invoice-agent'], paid.env);
  assert.equal(r.code, 1, r.err + r.out);
  for (const id of paid.ids) assert.match(r.out, new RegExp(`unresolved: ${id}`));
  assert.match(r.out, /in 2 pass\(es\)/);
  assert.match(r.out, /unauthenticated/);
  assert.deepEqual(await phases(paid.path, paid.ids), ['entered', 'entered']);
});

test('baton reconcile refuses bad arguments with exit 2 before touching the store, and never creates a database or key', async (t) => {
  const paid = await paidButUnrecorded(t, 1);
  for (const [bad, named] of [
    [['--passes', '0'], '--passes'],
    [['--passes', '21'], '--passes'],
    [['--limit', 'x'], '--limit'],
    [['--pool', '4'], '--pool'],
    [['--bogus'], 'bogus'],
  ] as const) {
    const r = await run(['--db', paid.path, ...bad], paid.env);
    assert.equal(r.code, 2, bad.join(' '));
    assert.ok(r.err.includes(named), `${bad.join(' ')}: ${r.err}`);
  }
  const bad = await run(['--db', paid.path], { BATON_HMAC_SECRETS: 'not-a-pair' });
  assert.equal(bad.code, 2);
  assert.match(bad.err, /BATON_HMAC_SECRETS/);
  assert.deepEqual(await phases(paid.path, paid.ids), ['entered'], 'nothing was reconciled');

  const dir = mkdtempSync(join(tmpdir(), 'baton-reconcile-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const missing = join(dir, 'none.db');
  assert.equal((await run(['--db', missing])).code, 2);
  copyFileSync(paid.path, join(dir, 'copy.db'));
  const keyless = await run(['--db', join(dir, 'copy.db')]);
  assert.equal(keyless.code, 2);
  assert.match(keyless.err, /no domain key/);
  assert.deepEqual(readdirSync(dir).sort(), ['copy.db'], 'no database and no key file were created');
  assert.match((await run(['--help'])).out, /usage: baton reconcile/);
});

test('baton reconcile --lineage of an unknown lineage is an error, not "nothing to do"', async (t) => {
  const paid = await paidButUnrecorded(t, 1);
  const r = await run(['--db', paid.path, '--lineage', 'invoice-agnet'], paid.env);
  assert.equal(r.code, 1, r.out);
  assert.match(r.err, /lineage_not_found/);
  assert.deepEqual(await phases(paid.path, paid.ids), ['entered']);
});
