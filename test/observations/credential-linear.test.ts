/**
 * OBS-12 ¶25 credential shapes, checked in linear time. The JWS and URL-password checks ran as
 * backtracking regexes over every string of a record (an `extensions` value has no length limit),
 * so `"eyJ"` ×160 000 took 84 s and `"://"` + 300 000 colons 119 s, blocking the server's event
 * loop for a submitted record. These tests hold adversarial inputs at a size the old regexes
 * would take minutes over, with a per-test timeout so a regression fails instead of hanging; and
 * they compare the linear checks with the old regexes on many short strings (where the regexes
 * are fast), so the accept/refuse behaviour is unchanged.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { isBatonError } from '../../src/core/errors.js';
import { readRecordValue } from '../../src/observations/index.js';
import { carriesCredential } from '../../src/observations/rules.js';
import { example } from './support.js';

const TIMEOUT = { timeout: 20_000 };
const N = 100_000;

const refusedAs = (value: unknown, rule: string, path: string): void => {
  assert.throws(
    () => readRecordValue(value),
    (err: unknown) =>
      isBatonError(err, 'observation_record_invalid') &&
      err.details['rule'] === rule &&
      err.details['path'] === path,
  );
};

test('OBS-12 ¶25: "eyJ" repeated 100 000 times is judged at once (no JWS: no dot)', TIMEOUT, () => {
  const s = 'eyJ'.repeat(N);
  assert.equal(carriesCredential(s), false);
  assert.ok(readRecordValue({ ...example(), extensions: { 'urn:x:e': s } }));
  // The same run closed as a JWS is one, at the same size.
  const jws = `${s}.eyJab.`;
  assert.equal(carriesCredential(jws), true);
  refusedAs(
    { ...example(), extensions: { 'urn:x:e': jws } },
    'credential_in_locator',
    '$.extensions.urn:x:e',
  );
});

test('OBS-12 ¶25: "eyJ" runs separated by dots, 100 000 of them, are judged at once', TIMEOUT, () => {
  assert.equal(carriesCredential('eyJ.'.repeat(N)), false, 'each run is too short');
  assert.equal(carriesCredential(`x${'eyJa.'.repeat(N)}`), false);
  assert.equal(carriesCredential('a.'.repeat(N)), false);
  assert.equal(carriesCredential(`${'eyJab.'.repeat(N)}`), true);
});

test(
  'OBS-12 ¶25: "://" and 300 000 colons are judged at once; a password before "@" still is one',
  TIMEOUT,
  () => {
    const colons = `://${':'.repeat(3 * N)}`;
    assert.equal(carriesCredential(colons), false);
    assert.ok(readRecordValue({ ...example(), extensions: { 'urn:x:e': colons } }));
    assert.equal(carriesCredential(`${colons}@h`), true);
    refusedAs(
      { ...example(), extensions: { 'urn:x:e': [`${colons}@h`] } },
      'credential_in_locator',
      '$.extensions.urn:x:e[0]',
    );
    assert.equal(carriesCredential('://:'.repeat(N)), false);
    assert.equal(carriesCredential(`://${'a'.repeat(3 * N)}`), false);
  },
);

test('OBS-12 ¶25: the other credential shapes stay linear on long strings too', TIMEOUT, () => {
  assert.equal(carriesCredential(`Bearer ${'a'.repeat(3 * N)}!`), false);
  assert.equal(carriesCredential(`${' '.repeat(3 * N)}x`), false);
  assert.equal(carriesCredential(`?${'a'.repeat(3 * N)}`), false);
  assert.equal(carriesCredential('?a'.repeat(N)), false);
});

// The regexes the linear checks replace: fast on short strings, so the oracle here.
const OLD = [/eyJ[\w-]{2,}\.eyJ[\w-]{2,}\./, /:\/\/[^/?#@\s]*:[^/?#@\s]*@/];

test(
  'the linear checks accept and refuse exactly what the old regexes did (200 000 short strings)',
  TIMEOUT,
  () => {
    // An alphabet of the characters the shapes turn on, and some they do not.
    const alphabet = [
      'e',
      'y',
      'J',
      'eyJ',
      'eyJab.',
      'ab',
      '.',
      ':',
      '/',
      '@',
      '?',
      '#',
      ' ',
      '\u00a0',
      '-',
      '_',
      'a',
      '0',
      '://',
      '!',
    ];
    let state = 0x2545f491;
    const next = (): number => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) % alphabet.length;
    };
    const hits = [0, 0];
    for (let i = 0; i < 200_000; i++) {
      const len = 1 + (i % 24);
      let s = '';
      for (let j = 0; j < len; j++) s += alphabet[next()];
      const old = OLD.some((re) => re.test(s));
      // The other shapes (Authorization values, URL parameters) are unchanged: compare only strings
      // they do not judge, so a difference here is one of the two rewritten checks.
      if (/^\s*(bearer|basic)\s/i.test(s) || /[?&#;][^=?&#;\s/]+=/.test(s)) continue;
      OLD.forEach((re, k) => {
        if (re.test(s)) hits[k] = (hits[k] ?? 0) + 1;
      });
      assert.equal(carriesCredential(s), old, JSON.stringify(s));
    }
    assert.ok(
      hits.every((h) => h > 100),
      `the alphabet reaches both shapes (${hits.join(', ')})`,
    );
  },
);
