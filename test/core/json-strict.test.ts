/**
 * parseStrictJson beyond the public suite: escaped duplicates, prototype safety, limits, trailing
 * data, BOM, encodings, surrogates, numbers, offsets, and properties against JSON.parse.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BatonError } from '../../src/core/errors.js';
import { canonicalize } from '../../src/core/jcs.js';
import {
  DEFAULT_JSON_MAX_BYTES,
  DEFAULT_JSON_MAX_DEPTH,
  hasLoneSurrogate,
  parseStrictJson,
} from '../../src/core/json.js';
import type { JsonValue } from '../../src/core/json.js';
import { accepted, outcome, refusal } from './json-outcome.js';

const bytes = (...values: number[]): Uint8Array => Uint8Array.from(values);
const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');

test('duplicate member names are refused, also when they collide only after unescaping', (t) => {
  const cases: [string, string][] = [
    ['{"a":1,"\\u0061":2}', 'a'],
    ['{"\\u0061":1,"a":2}', 'a'],
    ['{"\\u00e9":1,"\u00e9":2}', '\u00e9'],
    ['{"\\ud83d\\ude00":1,"\u{1f600}":2}', '\u{1f600}'],
    ['{"a\\/b":1,"a/b":2}', 'a/b'],
    ['{"\\"":1,"\\u0022":2}', '"'],
    ['{"\\n":1,"\\u000A":2}', '\n'],
    ['{"":1,"":2}', ''],
    ['{"a":1,"b":2,"a":3}', 'a'],
    ['{"a":{"b":1},"a":{"b":1}}', 'a'],
    ['{"x":{"a":1,"a":2}}', 'a'],
    ['[{"ok":1},{"a":1,"a":2}]', 'a'],
    ['{"__proto__":1,"__proto__":2}', '__proto__'],
  ];
  for (const [input, member] of cases) {
    for (const form of [input, utf8(input)]) {
      assert.equal(refusal(form, 'json_duplicate_member').details['member'], member, input);
    }
  }
  // Distinct names: case, normalization form and the same name in sibling objects.
  for (const input of ['{"a":1,"A":2}', '{"\u00e9":1,"e\u0301":2}', '[{"a":1},{"a":1}]', '{"a":{"a":1}}']) {
    accepted(input);
  }
  t.diagnostic(`checked ${cases.length * 2} duplicate and 4 distinct-name cases`);
});

test('the member name in details is cut to 64 code points, and messages never quote the input', () => {
  const long = '\u{1f600}'.repeat(100);
  const error = refusal(`{"${long}":1,"${long}":2}`, 'json_duplicate_member');
  assert.equal(error.details['member'], '\u{1f600}'.repeat(64));
  const secret = 'tok_s3cr3t_value';
  for (const input of [`{"${secret}":1,"${secret}":2}`, `{"a":"${secret}" x}`, `["${secret}\\ud800"]`]) {
    const result = outcome(input);
    assert.ok(!result.ok);
    assert.ok(!result.error.message.includes(secret), result.error.message);
  }
});

test('"__proto__", "constructor" and "prototype" are own data members; no prototype is touched', (t) => {
  const inputs = [
    '{"__proto__":{"polluted":1}}',
    '{"a":{"__proto__":{"polluted":1}}}',
    '[{"__proto__":{"polluted":1}}]',
    '{"constructor":{"prototype":{"polluted":1}}}',
    '{"__proto__":{"__proto__":{"polluted":1}},"prototype":{"polluted":1}}',
  ];
  for (const input of inputs) {
    const value = accepted(utf8(input));
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined, input);
    assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false);
    assert.equal(canonicalize(value), canonicalize(JSON.parse(input)), input);
  }
  const parsed = accepted('{"__proto__":{"polluted":1},"constructor":2}');
  assert.equal(Object.getPrototypeOf(parsed), Object.prototype);
  assert.deepEqual(Object.getOwnPropertyDescriptor(parsed, '__proto__'), {
    value: { polluted: 1 },
    writable: true,
    enumerable: true,
    configurable: true,
  });
  assert.deepEqual(Object.keys(parsed as object), ['__proto__', 'constructor']);
  assert.equal(canonicalize(parsed), '{"__proto__":{"polluted":1},"constructor":2}');
  t.diagnostic(`checked ${inputs.length + 1} prototype-pollution inputs`);
});

test('members never go through an inherited setter', () => {
  const calls: unknown[] = [];
  Object.defineProperty(Object.prototype, 'trap', {
    set: (v: unknown) => calls.push(v),
    configurable: true,
  });
  try {
    const value = accepted('{"trap":1}') as Record<string, JsonValue>;
    assert.equal(Object.getOwnPropertyDescriptor(value, 'trap')?.value, 1);
    assert.deepEqual(calls, []);
  } finally {
    delete (Object.prototype as Record<string, unknown>)['trap'];
  }
});

test('depth limit: default, custom, objects, and no stack overflow without a limit', (t) => {
  const arrays = (n: number): string => '['.repeat(n) + ']'.repeat(n);
  const objects = (n: number): string => '{"a":'.repeat(n - 1) + '{}' + '}'.repeat(n - 1);
  accepted(arrays(DEFAULT_JSON_MAX_DEPTH));
  accepted(objects(DEFAULT_JSON_MAX_DEPTH));
  const deep = refusal(arrays(DEFAULT_JSON_MAX_DEPTH + 1), 'json_too_deep');
  assert.equal(deep.details['limit'], DEFAULT_JSON_MAX_DEPTH);
  assert.equal(deep.details['offset'], DEFAULT_JSON_MAX_DEPTH);
  refusal(objects(DEFAULT_JSON_MAX_DEPTH + 1), 'json_too_deep');
  accepted(arrays(3), { maxDepth: 3 });
  refusal(arrays(4), 'json_too_deep', { maxDepth: 3 });
  accepted('"scalar"', { maxDepth: 0 });
  refusal('[]', 'json_too_deep', { maxDepth: 0 });
  accepted(arrays(500), { maxDepth: 500 });

  const n = 100_000;
  assert.equal(refusal('['.repeat(n), 'json_malformed', { maxDepth: Infinity }).details['offset'], n);
  let node = accepted(arrays(n), { maxDepth: Infinity });
  let depth = 0;
  while (Array.isArray(node)) {
    depth++;
    node = node[0] ?? null;
  }
  assert.equal(depth, n);
  t.diagnostic(`nested ${n} arrays parsed iteratively`);
});

test('size limit: checked first, in UTF-8 bytes, for strings and bytes', () => {
  const exactly = (size: number): string => `"${'x'.repeat(size - 2)}"`;
  accepted(exactly(DEFAULT_JSON_MAX_BYTES));
  const big = refusal(exactly(DEFAULT_JSON_MAX_BYTES + 1), 'json_too_large');
  assert.equal(big.details['limit'], DEFAULT_JSON_MAX_BYTES);
  assert.equal(big.status, 413);
  refusal(utf8(exactly(DEFAULT_JSON_MAX_BYTES + 1)), 'json_too_large');
  // "é" is one UTF-16 unit but two UTF-8 bytes: the string is 3 characters, 4 bytes.
  for (const form of ['"\u00e9"', utf8('"\u00e9"')]) {
    accepted(form, { maxBytes: 4 });
    assert.equal(refusal(form, 'json_too_large', { maxBytes: 3 }).details['size'], 4);
  }
  // Before any decoding or parsing: oversize garbage is too large, not malformed.
  refusal(bytes(0xff, 0xff, 0xff, 0xff), 'json_too_large', { maxBytes: 3 });
  refusal('[[[[', 'json_too_large', { maxBytes: 3 });
});

test('limits must be non-negative integers or Infinity', () => {
  for (const limits of [
    { maxDepth: -1 },
    { maxDepth: 1.5 },
    { maxBytes: Number.NaN },
    { maxBytes: -Infinity },
  ]) {
    assert.throws(
      () => parseStrictJson('1', limits),
      (e) => e instanceof BatonError && e.code === 'internal',
    );
  }
});

test('trailing data and non-JSON whitespace are malformed; JSON whitespace is fine', (t) => {
  const trailing: [string, number][] = [
    ['{} x', 3],
    ['[1]]', 3],
    ['1 2', 2],
    ['{}{}', 2],
    ['"a""b"', 3],
    ['true false', 5],
    ['null\u0000', 4],
    ['01', 1],
  ];
  for (const [input, offset] of trailing) {
    assert.equal(refusal(input, 'json_malformed').details['offset'], offset, input);
  }
  const badSpace = ['\u00a0[1]', '[1,\u2028 2]', '\u000b1', '\u000c1', '[1]\u3000'];
  for (const input of badSpace) refusal(input, 'json_malformed');
  assert.deepEqual(accepted(' \t\r\n[ 1 ,\n\t2 ] \r\n'), [1, 2]);
  t.diagnostic(`checked ${trailing.length + badSpace.length + 1} whitespace and trailing-data cases`);
});

test('a leading byte order mark is refused; U+FEFF inside a string is a character', () => {
  refusal(bytes(0xef, 0xbb, 0xbf, 0x7b, 0x7d), 'json_invalid_encoding');
  refusal('\ufeff{}', 'json_invalid_encoding');
  refusal(bytes(0xef, 0xbb, 0xbf), 'json_invalid_encoding');
  refusal(bytes(0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00), 'json_invalid_encoding');
  assert.deepEqual(accepted(utf8('["\ufeff"]')), ['\ufeff']);
  refusal(' \ufeff{}', 'json_malformed');
});

test('bytes must be UTF-8: nothing is repaired', (t) => {
  const invalid = [
    bytes(0x22, 0xff, 0x22), // never valid in UTF-8
    bytes(0x22, 0xc0, 0xaf, 0x22), // overlong "/"
    bytes(0x22, 0xe2, 0x82, 0x22), // truncated "€"
    bytes(0x22, 0xed, 0xa0, 0x80, 0x22), // UTF-8-encoded U+D800 (CESU-8)
    bytes(0x22, 0xf4, 0x90, 0x80, 0x80, 0x22), // above U+10FFFF
    bytes(0x22, 0x80, 0x22), // lone continuation byte
  ];
  for (const input of invalid) refusal(input, 'json_invalid_encoding');
  assert.deepEqual(accepted(bytes(0x22, 0xf0, 0x9f, 0x98, 0x80, 0x22)), '\u{1f600}');
  assert.deepEqual(accepted(Buffer.from('{"k":"\u20ac"}')), { k: '\u20ac' });
  t.diagnostic(`checked ${invalid.length} invalid UTF-8 inputs`);
});

test('lone surrogates are refused, escaped or raw, in values and member names', (t) => {
  const lone = [
    '["\\ud800"]',
    '["\\udc00"]',
    '["\\ud800\\u0041"]',
    '["\\udc00\\ud800"]',
    '["\\ud800\\ud800"]',
    '["x\\ud83d"]',
    '{"\\udfaa":1}',
    '["\ud800"]', // raw, in a string input
    '{"\udc00":1}',
    '["\\ud83d\ude00"]', // escaped high half, raw low half
    '[1]\ud800',
  ];
  for (const input of lone) refusal(input, 'json_lone_surrogate');
  assert.equal(refusal('[1, "ab\\ud800"]', 'json_lone_surrogate').details['offset'], 4);
  for (const input of ['["\\ud83d\\ude00"]', '["\\uD83D\\uDE00"]', '["\u{1f600}"]', '{"\\ud83d\\ude00":1}']) {
    assert.equal(canonicalize(accepted(input)), canonicalize(JSON.parse(input)), input);
  }
  assert.equal(hasLoneSurrogate('a\u{1f600}b'), false);
  assert.equal(hasLoneSurrogate('a\ud83d'), true);
  t.diagnostic(`checked ${lone.length + 5} surrogate cases`);
});

test('strings: escapes, control characters and unterminated strings', () => {
  const escapes = '["\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u00E9\\u0000"]';
  assert.deepEqual(accepted(escapes), JSON.parse(escapes));
  const bad: [string, number][] = [
    ['"a\tb"', 2],
    ['"a\nb"', 2],
    ['"\u0000"', 1],
    ['"\\x"', 1],
    ['"\\u12"', 1],
    ['"\\u12G4"', 1],
    ['"\\U0041"', 1],
    ['"abc', 4],
    ['"abc\\', 4],
  ];
  for (const [input, offset] of bad) {
    assert.equal(refusal(input, 'json_malformed').details['offset'], offset, JSON.stringify(input));
  }
  assert.equal(accepted('"\u007f"'), '\u007f');
});

test('numbers: nothing overflows, underflows or rounds across integers silently', (t) => {
  const acceptedNumbers = [
    '9007199254740991',
    '-9007199254740991',
    '-0',
    '0e-400',
    '-0.0e99999',
    '5e-324',
    '3e-324',
    '1.7976931348623157e308',
    '1e21',
    '-1e21',
    '123.456e78',
    '0.1',
    '333333333.33333329',
    '9007199254740991.0',
    '1E+2',
  ];
  for (const token of acceptedNumbers) {
    assert.ok(Object.is(accepted(token), JSON.parse(token)), token);
  }
  const refused = [
    '9007199254740992',
    '-9007199254740992',
    '9007199254740993',
    '1000000000000000000000',
    '1e20',
    '-1e20',
    '9.007199254740993e15',
    '9007199254740993.5',
    '1.8e308',
    '-1e400',
    '1e-400',
    '-2e-324',
    '0.0001e-400000001',
  ];
  for (const token of refused) refusal(`[${token}]`, 'json_number_out_of_range');
  assert.equal(refusal('[1, 1e999]', 'json_number_out_of_range').details['offset'], 4);
  assert.ok(Object.is(accepted('0.0000e-400'), 0));
  const malformed = ['-', '+1', '.5', '1.', '1e', '1e+', '01', '-01', '0x10', 'NaN', 'Infinity', '-Infinity'];
  for (const token of malformed) refusal(token, 'json_malformed');
  t.diagnostic(
    `checked ${acceptedNumbers.length} accepted, ${refused.length} out-of-range, ${malformed.length} malformed numbers`,
  );
});

test('malformed input reports where, in code units and in UTF-8 bytes', (t) => {
  const cases: [string, number, number][] = [
    ['', 0, 0],
    ['   ', 3, 3],
    ['[1,]', 3, 3],
    ['{"a" 1}', 5, 5],
    ['{"a":1,}', 7, 7],
    ['{1:2}', 1, 1],
    ['[1', 2, 2],
    ['[1 2]', 3, 3],
    ['[tru]', 1, 1],
    ['nul', 0, 0],
    ["{'a':1}", 1, 1],
    ['["\u00e9",x]', 5, 6],
    ['["\u{1f600}",x]', 6, 8],
    ['[1,/*c*/2]', 3, 3],
  ];
  for (const [input, offset, byteOffset] of cases) {
    for (const form of [input, utf8(input)]) {
      const error = refusal(form, 'json_malformed');
      assert.deepEqual(error.details, { offset, byteOffset }, JSON.stringify(input));
      assert.equal(error.status, 400);
    }
  }
  t.diagnostic(`checked ${cases.length * 2} malformed inputs with offsets`);
});

test('property: any JSON text JSON.stringify writes parses to what JSON.parse gives, or is refused for a band number', () => {
  const inBand = (v: unknown): boolean =>
    typeof v === 'number'
      ? Math.abs(v) > Number.MAX_SAFE_INTEGER && Math.abs(v) < 1e21
      : v !== null && typeof v === 'object' && Object.values(v).some(inBand);
  fc.assert(
    fc.property(fc.jsonValue({ stringUnit: 'binary', maxDepth: 6 }), fc.boolean(), (value, pretty) => {
      const text = JSON.stringify(value, null, pretty ? 2 : undefined);
      const expected: unknown = JSON.parse(text);
      const result = outcome(utf8(text));
      if (inBand(expected)) {
        assert.ok(!result.ok && result.error.code === 'json_number_out_of_range', text);
      } else {
        assert.ok(result.ok, text);
        assert.deepStrictEqual(result.value, expected);
      }
    }),
    { numRuns: 500 },
  );
});

test('property: a string round-trips through JSON.stringify exactly when it has no lone surrogate', () => {
  const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
  fc.assert(
    fc.property(
      fc.string({ unit: fc.oneof(anyCodeUnit, fc.constantFrom('\ud83d', '\ude00', '"', '\\')) }),
      (s) => {
        const wellFormed = Buffer.from(s, 'utf8').toString('utf8') === s;
        const result = outcome(JSON.stringify({ [s]: s }));
        if (wellFormed) assert.ok(result.ok && canonicalize(result.value) === canonicalize({ [s]: s }));
        else assert.ok(!result.ok && result.error.code === 'json_lone_surrogate');
      },
    ),
    { numRuns: 500 },
  );
});
