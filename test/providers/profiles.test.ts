/**
 * The checked-in provider profiles (AOC "Provider Profile Contract"): they validate, pin what the
 * contract lists, map the sandbox's statuses as docs/sandbox.md defines them, carry no secret, and
 * deploy to a running sandbox under their own version.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseStrictJson } from '../../src/core/json.js';
import { profileDigest, validateProfile } from '../../src/occurrences/index.js';
import {
  createSandboxProvider,
  deployProfile,
  loadProfile,
  profilesDir,
  SANDBOX_PROFILES,
  sandboxDeployment,
} from '../../src/providers/index.js';
import { repoRoot } from '../support/paths.js';

test('both profiles validate and pin identity, account, environment, key rule, sources and horizons', (t) => {
  assert.equal(profilesDir(), join(repoRoot, 'profiles'));
  for (const name of SANDBOX_PROFILES) {
    const p = validateProfile(parseStrictJson(readFileSync(join(repoRoot, 'profiles', `${name}.json`))));
    assert.equal(p.id, name);
    assert.equal(p.account, 'acct_sandbox');
    assert.equal(p.environment, 'sandbox');
    assert.deepEqual(p.nativeKey, {
      rule: 'template',
      template: 'baton:{domain}:{occurrenceId}',
      header: 'Idempotency-Key',
    });
    assert.equal(p.reference.member, 'reference');
    assert.deepEqual(p.statusSources.map((s) => s.kind).sort(), [
      'listing',
      'lookup_by_key',
      'lookup_by_reference',
      'webhook',
    ]);
    for (const s of p.statusSources) {
      assert.ok(s.retentionSeconds > 0 && s.freshnessSeconds > 0, s.id);
    }
    assert.equal(p.statusSources.find((s) => s.kind === 'listing')?.completeness, 'paged_to_end');
  }
  t.diagnostic(`checked ${SANDBOX_PROFILES.length} profiles`);
});

test('the status map follows the sandbox: only canceled_before_processing establishes no effect', () => {
  for (const name of SANDBOX_PROFILES) {
    assert.deepEqual(loadProfile(name).statuses, {
      pending: { interpretation: 'accepted', establishesNoEffect: false },
      succeeded: { interpretation: 'success', establishesNoEffect: false },
      failed: { interpretation: 'final_failure', establishesNoEffect: false },
      canceled_before_processing: { interpretation: 'not_accepted', establishesNoEffect: true },
    });
  }
});

test('profiles name keys, never carry secrets; deployment re-pins under a new version', async (t) => {
  const secret = Buffer.alloc(32, 5);
  const sandbox = createSandboxProvider({ hmacSecret: secret });
  await sandbox.listen(0);
  t.after(() => sandbox.close());
  for (const name of SANDBOX_PROFILES) {
    const text = readFileSync(join(repoRoot, 'profiles', `${name}.json`), 'utf8');
    for (const enc of ['base64url', 'base64', 'hex'] as const)
      assert.ok(!text.includes(secret.toString(enc)));
    const template = loadProfile(name);
    const deployed = deployProfile(template, sandboxDeployment(sandbox, 'http://127.0.0.1:4999'));
    assert.match(deployed.version, /^2026-01-01\.[0-9a-f]{8}$/);
    assert.notEqual(profileDigest(deployed), profileDigest(template));
    assert.deepEqual(deployed.statuses, template.statuses, 'semantics are unchanged');
    for (const s of deployed.statusSources) {
      assert.ok(s.url.startsWith(s.kind === 'webhook' ? 'http://127.0.0.1:4999/' : `${sandbox.url}/`), s.id);
      const pin = s.authentication;
      if (pin.kind === 'hmac-sha256') assert.equal(pin.secretId, sandbox.verification.hmac?.secret_id);
      if (pin.kind === 'ed25519') assert.equal(pin.kid, sandbox.verification.ed25519?.kid);
    }
    assert.ok(!JSON.stringify(deployed).includes(secret.toString('base64url')));
  }
});
