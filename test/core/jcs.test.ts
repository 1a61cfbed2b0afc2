/**
 * RFC 8785 JCS against the cyberphone/json-canonicalization vectors (test/vectors/jcs-rfc8785,
 * SOURCE.md there): the six input/output pairs parsed with parseStrictJson, the first 10,000 lines of
 * the ES6 number file, and the values JCS has no form for (RFC 8785 §3.2.2.3, Appendix B).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BatonError } from '../../src/core/errors.js';
import { canonicalBytes, canonicalize, jcsString } from '../../src/core/jcs.js';
import { parseStrictJson } from '../../src/core/json.js';
import { vectorsDir } from '../support/paths.js';

const jcsDir = join(vectorsDir, 'jcs-rfc8785');

function hexBytes(text: string): Buffer {
  const hex = text.replace(/\s+/g, '');
  assert.match(hex, /^(?:[0-9a-f]{2})+$/);
  return Buffer.from(hex, 'hex');
}

test('RFC 8785 pairs: parse input/X.json strictly, canonicalize, match output/X.json and outhex/X.txt', (t) => {
  const names = readdirSync(join(jcsDir, 'input'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
  assert.equal(names.length, 6, 'SOURCE.md lists six cases');
  for (const name of names) {
    const value = parseStrictJson(readFileSync(join(jcsDir, 'input', `${name}.json`)));
    const actual = canonicalBytes(value);
    const expected = readFileSync(join(jcsDir, 'output', `${name}.json`));
    assert.ok(actual.equals(expected), `${name}: ${actual.toString('utf8')}`);
    assert.ok(actual.equals(hexBytes(readFileSync(join(jcsDir, 'outhex', `${name}.txt`), 'utf8'))), name);
    assert.equal(canonicalize(value), expected.toString('utf8'));
  }
  t.diagnostic(`checked ${names.length} input/output pairs (and their hex forms)`);
});

test('RFC 8785 numbers: the first 10,000 lines of the ES6 number file', (t) => {
  const lines = readFileSync(join(jcsDir, 'es6numbers-first10000.txt'), 'utf8')
    .split('\n')
    .filter((line) => line !== '');
  assert.equal(lines.length, 10_000);
  const view = new DataView(new ArrayBuffer(8));
  for (const line of lines) {
    const [hex = '', expected = ''] = line.split(',');
    assert.match(hex, /^[0-9a-f]{1,16}$/, line);
    view.setBigUint64(0, BigInt(`0x${hex}`));
    const value = view.getFloat64(0);
    assert.equal(canonicalize(value), expected, line);
    assert.equal(canonicalize([value]), `[${expected}]`, line);
  }
  t.diagnostic(`checked ${lines.length} number serializations`);
});

test('values with no JCS form raise jcs_unsupported_value', (t) => {
  const sparse: unknown[] = [];
  sparse[1] = 1;
  const unsupported: [string, unknown][] = [
    ['NaN', Number.NaN],
    ['Infinity', Infinity],
    ['-Infinity', -Infinity],
    ['undefined', undefined],
    ['a function', () => 1],
    ['a bigint', 1n],
    ['a Date', new Date(0)],
    ['a symbol', Symbol('s')],
    ['a lone-surrogate string', 'a\ud800'],
    ['a lone-surrogate member name', { '\udc00': 1 }],
    ['NaN nested in an array', [1, Number.NaN]],
    ['undefined as a member value', { a: undefined }],
    ['a Map', new Map()],
    ['a boxed number', Object(1) as unknown],
    ['a sparse array (a hole would become null)', sparse],
    ['a class instance', new (class Point {})()],
  ];
  for (const [label, value] of unsupported) {
    assert.throws(
      () => canonicalize(value),
      (e) => e instanceof BatonError && e.code === 'jcs_unsupported_value',
      label,
    );
  }
  // Null-prototype objects and own "__proto__" members are still plain data.
  const bare = Object.create(null) as Record<string, unknown>;
  bare['b'] = 1;
  bare['a'] = [true, null, 'x'];
  assert.equal(canonicalize(bare), '{"a":[true,null,"x"],"b":1}');
  t.diagnostic(`checked ${unsupported.length} unsupported values`);
});

test('a refused value is named by its path from the root', () => {
  const sparse: unknown[] = [];
  sparse[1] = 1;
  const cases: [unknown, string][] = [
    [{ a: [1, { b: Number.NaN }] }, '$.a[1].b'],
    [{ x: sparse }, '$.x[0]'],
    [{ o: { '\udc00': 1 } }, '$.o'],
    [[['ok', 'a\ud800']], '$[0][1]'],
    [{ a: { b: { c: undefined } }, z: 1 }, '$.a.b.c'],
    [Number.NaN, '$'],
  ];
  for (const [value, path] of cases) {
    assert.throws(
      () => canonicalize(value),
      (e) => e instanceof BatonError && e.code === 'jcs_unsupported_value' && e.details?.['path'] === path,
      path,
    );
  }
  // A refusal leaves nothing behind: the next value's paths start at the root again.
  assert.equal(canonicalize({ a: [1, { b: 2 }] }), '{"a":[1,{"b":2}]}');
});

test('jcsString is canonicalize of the string: every ASCII character, escapes, non-ASCII and pairs', (t) => {
  // Its fast path writes printable ASCII without JSON.stringify: hold both paths to the library.
  const samples: string[] = ['', 'plain id_09-~', 'a"b', 'back\\slash', 'tab\there', '\u007f', 'é', '😀'];
  for (let c = 0; c < 128; c++) samples.push(String.fromCharCode(c), `x${String.fromCharCode(c)}y`);
  let seed = 7;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  for (let i = 0; i < 2000; i++) {
    const length = next() % 12;
    let text = '';
    // Mostly printable ASCII (the fast path), sometimes control, non-ASCII or paired surrogates.
    for (let j = 0; j < length; j++) {
      const r = next() % 20;
      text +=
        r === 0
          ? String.fromCharCode(next() % 32)
          : r === 1
            ? '\u00e9\u{1f600}'
            : String.fromCharCode(32 + (next() % 95));
    }
    samples.push(text);
  }
  for (const s of samples) assert.equal(jcsString(s, '$.s'), canonicalize(s), JSON.stringify(s));
  for (const lone of ['\ud800', 'a\udfffb'])
    assert.throws(
      () => jcsString(lone, '$.s'),
      (e) => e instanceof BatonError && e.code === 'jcs_unsupported_value' && e.details?.['path'] === '$.s',
    );
  t.diagnostic(`compared ${samples.length} strings`);
});
