/**
 * schemas/provider-profile.schema.json (format 2) and the validator agree on the shipped profiles
 * and on refusals a schema can state; the rules only the validator can check are listed apart.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { validateProfile } from '../../src/occurrences/index.js';
import { loadProfile, SHIPPED_PROFILES } from '../../src/providers/index.js';
import { repoRoot } from '../support/paths.js';

type Json = Record<string, unknown>;
const schema = JSON.parse(
  readFileSync(join(repoRoot, 'schemas', 'provider-profile.schema.json'), 'utf8'),
) as Json;
const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, strictTypes: false });
const validate = ajv.compile(schema);

const codeAccepts = (v: unknown): boolean => {
  try {
    validateProfile(v);
    return true;
  } catch {
    return false;
  }
};

test('every shipped format 2 profile matches the schema', () => {
  for (const name of SHIPPED_PROFILES) {
    const p = loadProfile(name);
    if (p.format !== 'baton.provider-profile/2') continue;
    assert.equal(validate(p), true, `${name}: ${JSON.stringify(validate.errors)}`);
  }
});

test('schema and validator both refuse what the schema can say', () => {
  const base = JSON.parse(JSON.stringify(loadProfile('stripe-payment-intents'))) as Json;
  const edits: ((p: Json) => void)[] = [
    (p) => void (p['format'] = 'baton.provider-profile/9'),
    (p) => void (p['extra'] = true),
    (p) => void ((p['entry'] as Json)['method'] = 'PUT'),
    (p) => void (((p['statusSources'] as Json[])[1] as Json)['method'] = 'POST'),
    (p) => void ((((p['statusSources'] as Json[])[1] as Json)['read'] as Json)['status'] = 'status'),
    (p) => void ((((p['statusSources'] as Json[])[0] as Json)['read'] as Json)['nativeKeyOf'] = 'object'),
    (p) =>
      void ((((p['statusSources'] as Json[])[1] as Json)['read'] as Json)['nativeKeyOf'] = 'causing_request'),
    (p) =>
      void ((((p['statusSources'] as Json[])[2] as Json)['authentication'] as Json)['toleranceSeconds'] = 0),
    (p) =>
      void ((((p['statusSources'] as Json[])[1] as Json)['authentication'] as Json)['origin'] =
        'http://api.stripe.com'),
  ];
  for (const edit of edits) {
    const p = structuredClone(base);
    edit(p);
    assert.equal(validate(p), false);
    assert.equal(codeAccepts(p), false);
  }
  // Only the validator: a channel pinned to another origin than the call's.
  const other = structuredClone(base);
  (((other['statusSources'] as Json[])[1] as Json)['authentication'] as Json)['origin'] =
    'https://evil.example';
  assert.equal(validate(other), true);
  assert.equal(codeAccepts(other), false);
});
