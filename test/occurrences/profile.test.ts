/** Provider profiles: the strict validator, the pinned digest, native key and request rules. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { digestJcs } from '../../src/core/digest.js';
import { canonicalBytes } from '../../src/core/jcs.js';
import { parseStrictJson } from '../../src/core/json.js';
import type { JsonObject } from '../../src/core/json.js';
import {
  deriveNativeKey,
  mapStatus,
  profileDigest,
  readProviderReference,
  requestDigest,
  validateProfile,
} from '../../src/occurrences/index.js';
import { paymentsProfile } from './helpers.js';

function without(obj: JsonObject, path: string[]): JsonObject {
  const copy = structuredClone(obj);
  let node: JsonObject = copy;
  for (const k of path.slice(0, -1)) node = node[k] as JsonObject;
  delete node[path.at(-1) ?? ''];
  return copy;
}

function withValue(obj: JsonObject, path: (string | number)[], value: unknown): JsonObject {
  const copy = structuredClone(obj);
  let node = copy as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) node = node[k] as Record<string | number, unknown>;
  node[path.at(-1) ?? ''] = value;
  return copy;
}

function refused(doc: unknown): string {
  try {
    validateProfile(doc);
  } catch (e) {
    assert.equal((e as { code: string }).code, 'profile_invalid');
    return String((e as { details: { path: string } }).details.path);
  }
  assert.fail('the profile was accepted');
}

test('a realistic payments-like profile validates, parsed by parseStrictJson, and pins its digest', () => {
  const text = JSON.stringify(paymentsProfile());
  const doc = validateProfile(parseStrictJson(text));
  assert.equal(profileDigest(doc), digestJcs(JSON.parse(text)));
  assert.equal(mapStatus(doc, 'canceled_before_processing')?.establishesNoEffect, true);
  assert.equal(mapStatus(doc, 'failed')?.establishesNoEffect, false);
  assert.equal(mapStatus(doc, 'processing'), undefined);
  assert.equal(mapStatus(doc, '__proto__'), undefined);
  assert.equal(mapStatus(doc, 'toString'), undefined);
});

test('a profile lacking any required member is refused (profile_invalid)', (t) => {
  const base = paymentsProfile();
  const required = [
    ['format'],
    ['id'],
    ['version'],
    ['provider'],
    ['provider', 'apiVersion'],
    ['account'],
    ['environment'],
    ['request'],
    ['request', 'members'],
    ['request', 'required'],
    ['request', 'private'],
    ['nativeKey'],
    ['nativeKey', 'template'],
    ['nativeKey', 'header'],
    ['reference'],
    ['reference', 'member'],
    ['reference', 'pattern'],
    ['acknowledgement'],
    ['acknowledgement', 'authentication'],
    ['acknowledgement', 'freshnessSeconds'],
    ['statusSources'],
    ['statuses'],
  ];
  const source = [
    'id',
    'kind',
    'url',
    'authentication',
    'retentionSeconds',
    'freshnessSeconds',
    'completeness',
    'pagination',
  ];
  for (const path of required) assert.ok(refused(without(base, path)).length > 0, path.join('.'));
  for (const member of source) {
    const path = refused(without(base, ['statusSources', '0', member] as string[]));
    assert.equal(path, `$.statusSources[0].${member}`);
  }
  t.diagnostic(`checked ${required.length + source.length} missing members`);
});

test('malformed profile members are refused', (t) => {
  const base = paymentsProfile();
  const cases: [(string | number)[], unknown][] = [
    [['format'], 'baton.provider-profile/2'],
    [['extra'], true],
    [['nativeKey', 'template'], 'baton:{domain}:fixed'], // not derived from the occurrence
    [['nativeKey', 'template'], 'baton:{occurrenceId}:{caller}'],
    [['nativeKey'], { rule: 'sha256-jcs', members: ['account'], prefix: '', header: 'Idempotency-Key' }],
    [['nativeKey'], { rule: 'caller-chosen' }],
    [['reference', 'pattern'], 'pay_.*'],
    [['reference', 'pattern'], '^(unclosed$'],
    [
      ['request', 'required'],
      ['amount', 'unknown'],
    ],
    [
      ['request', 'members'],
      ['amount', 'amount'],
    ],
    [['statusSources'], []],
    [['statusSources', 0, 'kind'], 'polling'],
    [['statusSources', 0, 'url'], 'ftp://example.test/x'],
    [['statusSources', 0, 'retentionSeconds'], 0],
    [['statusSources', 0, 'freshnessSeconds'], 1.5],
    [['statusSources', 0, 'completeness'], 'complete'],
    [['statusSources', 1, 'id'], 'by-key'],
    [['statusSources', 2, 'authentication', 'kid'], 'sha256:' + '0'.repeat(64)],
    [['statusSources', 0, 'authentication'], { kind: 'jwks', url: 'https://p.test/jwks', kids: [] }],
    [['statusSources', 0, 'authentication'], { kind: 'none' }],
    [['statuses'], {}],
    [['statuses', 'pending'], { interpretation: 'accepted', establishesNoEffect: true }],
    [['statuses', 'weird status'], { interpretation: 'success', establishesNoEffect: false }],
  ];
  for (const [path, value] of cases) refused(withValue(base, path, value));
  // A lookup by key needs a native key rule.
  refused(withValue(base, ['nativeKey'], { rule: 'none' }));
  t.diagnostic(`checked ${cases.length + 1} malformed profiles`);
});

test('native keys are derived from the occurrence by the profile rule, never from the caller', () => {
  const template = validateProfile(paymentsProfile());
  assert.equal(deriveNativeKey(template, { domain: 'd1', occurrenceId: 'occ_1' }), 'baton:d1:occ_1');
  const hashed = validateProfile(
    paymentsProfile({
      nativeKey: {
        rule: 'sha256-jcs',
        members: ['profileId', 'account', 'occurrenceId'],
        prefix: 'bk_',
        header: 'Idempotency-Key',
      },
    }),
  );
  const expected = createHash('sha256')
    .update(
      canonicalBytes({ profileId: 'sandbox-payments', account: 'acct_sandbox_001', occurrenceId: 'occ_1' }),
    )
    .digest('hex');
  assert.equal(deriveNativeKey(hashed, { domain: 'd1', occurrenceId: 'occ_1' }), `bk_${expected}`);
  assert.notEqual(deriveNativeKey(hashed, { domain: 'd1', occurrenceId: 'occ_2' }), `bk_${expected}`);
});

test('the request representation bounds what is digested', () => {
  const p = validateProfile(paymentsProfile());
  const req = { amount: 5, currency: 'EUR', destination: 'x' };
  assert.equal(requestDigest(p, req), digestJcs(req));
  assert.equal(requestDigest(p, { destination: 'x', currency: 'EUR', amount: 5 }), digestJcs(req));
  assert.throws(() => requestDigest(p, { ...req, nativeKey: 'k' }), { code: 'input_invalid' });
  assert.throws(() => requestDigest(p, { amount: 5 }), { code: 'input_invalid' });
});

test('the provider reference is read by the profile rule', () => {
  const p = validateProfile(paymentsProfile());
  assert.deepEqual(readProviderReference(p, { id: 'pay_abcd1234' }), {
    kind: 'found',
    value: 'pay_abcd1234',
  });
  assert.deepEqual(readProviderReference(p, { id: 'ch_abcd1234' }), { kind: 'malformed' });
  assert.deepEqual(readProviderReference(p, { other: 1 }), { kind: 'absent' });
  assert.deepEqual(readProviderReference(p, 'pay_abcd1234'), { kind: 'absent' });
});
