/**
 * parseStrictJson against nst/JSONTestSuite (test/vectors/json-test-suite, SOURCE.md there):
 * every file read as raw bytes; y_ accepted (except the two duplicate-member files, refused under
 * RFC 7493 §2.3), n_ refused with a json_* BatonError, i_ and test_transform given the verdicts below,
 * which must be the ones docs/json.md publishes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BatonErrorCode } from '../../src/core/errors.js';
import { canonicalize } from '../../src/core/jcs.js';
import { repoRoot, vectorsDir } from '../support/paths.js';
import { accepted, outcome, refusal } from './json-outcome.js';

type Expected = { readonly accept: string } | { readonly reject: BatonErrorCode };

const suiteDir = join(vectorsDir, 'json-test-suite');
const OVERFLOW: Expected = { reject: 'json_number_out_of_range' };
const ENCODING: Expected = { reject: 'json_invalid_encoding' };
const SURROGATE: Expected = { reject: 'json_lone_surrogate' };
const DUPLICATE: Expected = { reject: 'json_duplicate_member' };

/** y_ files refused on purpose: grammatical under RFC 8259, duplicates under I-JSON (RFC 7493 §2.3). */
const Y_EXCEPTIONS: Readonly<Record<string, BatonErrorCode>> = {
  y_object_duplicated_key: 'json_duplicate_member',
  y_object_duplicated_key_and_value: 'json_duplicate_member',
};

/** The implementation-defined cases; docs/json.md gives the reason for each. */
const I_VERDICTS: Readonly<Record<string, Expected>> = {
  i_number_double_huge_neg_exp: OVERFLOW,
  i_number_huge_exp: OVERFLOW,
  i_number_neg_int_huge_exp: OVERFLOW,
  i_number_pos_double_huge_exp: OVERFLOW,
  i_number_real_neg_overflow: OVERFLOW,
  i_number_real_pos_overflow: OVERFLOW,
  i_number_real_underflow: OVERFLOW,
  i_number_too_big_neg_int: OVERFLOW,
  i_number_too_big_pos_int: OVERFLOW,
  i_number_very_big_negative_int: OVERFLOW,
  i_object_key_lone_2nd_surrogate: SURROGATE,
  i_string_1st_surrogate_but_2nd_missing: SURROGATE,
  i_string_1st_valid_surrogate_2nd_invalid: SURROGATE,
  'i_string_UTF-16LE_with_BOM': ENCODING,
  'i_string_UTF-8_invalid_sequence': ENCODING,
  'i_string_UTF8_surrogate_U+D800': ENCODING,
  i_string_incomplete_surrogate_and_escape_valid: SURROGATE,
  i_string_incomplete_surrogate_pair: SURROGATE,
  i_string_incomplete_surrogates_escape_valid: SURROGATE,
  i_string_invalid_lonely_surrogate: SURROGATE,
  i_string_invalid_surrogate: SURROGATE,
  'i_string_invalid_utf-8': ENCODING,
  'i_string_inverted_surrogates_U+1D11E': SURROGATE,
  i_string_iso_latin_1: ENCODING,
  i_string_lone_second_surrogate: SURROGATE,
  i_string_lone_utf8_continuation_byte: ENCODING,
  i_string_not_in_unicode_range: ENCODING,
  i_string_overlong_sequence_2_bytes: ENCODING,
  i_string_overlong_sequence_6_bytes: ENCODING,
  i_string_overlong_sequence_6_bytes_null: ENCODING,
  'i_string_truncated-utf-8': ENCODING,
  i_string_utf16BE_no_BOM: ENCODING,
  i_string_utf16LE_no_BOM: ENCODING,
  i_structure_500_nested_arrays: { reject: 'json_too_deep' },
  'i_structure_UTF-8_BOM_empty_object': ENCODING,
};

/** test_transform has no upstream verdicts; these are Baton's (docs/json.md). Accepted ones give the JCS. */
const TRANSFORM_VERDICTS: Readonly<Record<string, Expected>> = {
  'number_-9223372036854775808': OVERFLOW,
  'number_-9223372036854775809': OVERFLOW,
  'number_1.0': { accept: '[1]' },
  'number_1.000000000000000005': { accept: '[1]' },
  number_1000000000000000: { accept: '[1000000000000000]' },
  number_10000000000000000999: OVERFLOW,
  'number_1e-999': OVERFLOW,
  number_1e6: { accept: '[1000000]' },
  number_9223372036854775807: OVERFLOW,
  number_9223372036854775808: OVERFLOW,
  object_key_nfc_nfd: { accept: '{"e\u0301":"NFD","\u00e9":"NFC"}' },
  object_key_nfd_nfc: { accept: '{"e\u0301":"NFD","\u00e9":"NFC"}' },
  object_same_key_different_values: DUPLICATE,
  object_same_key_same_value: DUPLICATE,
  object_same_key_unclear_values: DUPLICATE,
  string_1_escaped_invalid_codepoint: SURROGATE,
  string_1_invalid_codepoint: ENCODING,
  string_2_escaped_invalid_codepoints: SURROGATE,
  string_2_invalid_codepoints: ENCODING,
  string_3_escaped_invalid_codepoints: SURROGATE,
  string_3_invalid_codepoints: ENCODING,
  string_with_escaped_NULL: { accept: '["A\\u0000B"]' },
};

interface Case {
  readonly name: string;
  readonly bytes: Buffer;
}

function readCases(folder: string, prefix = ''): Case[] {
  const dir = join(suiteDir, folder);
  return readdirSync(dir)
    .filter((file) => file.endsWith('.json') && file.startsWith(prefix))
    .sort()
    .map((file) => ({ name: file.slice(0, -'.json'.length), bytes: readFileSync(join(dir, file)) }));
}

function checkVerdict(c: Case, expected: Expected): void {
  const result = outcome(c.bytes);
  if ('accept' in expected) {
    assert.ok(result.ok, `${c.name}: expected acceptance, got ${result.ok ? '' : result.error.code}`);
    assert.equal(canonicalize(result.value), expected.accept, c.name);
  } else {
    assert.ok(!result.ok, `${c.name}: expected ${expected.reject}, but it was accepted`);
    assert.equal(result.error.code, expected.reject, `${c.name}: ${result.error.message}`);
  }
}

/** The verdict rows of docs/json.md: | `name` | accept/reject | `canonical JCS or code` | why |. */
function documentedVerdicts(): Map<string, Expected> {
  const rows = new Map<string, Expected>();
  const doc = readFileSync(join(repoRoot, 'docs', 'json.md'), 'utf8');
  for (const line of doc.split('\n')) {
    const m = /^\| `([^`]+)` \| (accept|reject) \| `([^`]+)` \|/.exec(line);
    if (m === null) continue;
    const [, name = '', verdict, value = ''] = m;
    assert.ok(!rows.has(name), `docs/json.md lists ${name} twice`);
    rows.set(name, verdict === 'accept' ? { accept: value } : { reject: value as BatonErrorCode });
  }
  return rows;
}

test('JSONTestSuite y_: accepted with the value JSON.parse gives, except the duplicate members', (t) => {
  const cases = readCases('test_parsing', 'y_');
  assert.ok(cases.length > 0);
  let acceptedCount = 0;
  for (const c of cases) {
    const exception = Y_EXCEPTIONS[c.name];
    if (exception !== undefined) {
      refusal(c.bytes, exception);
      continue;
    }
    const value = accepted(c.bytes);
    assert.deepStrictEqual(value, JSON.parse(c.bytes.toString('utf8')), c.name);
    // Closure: what Baton canonicalizes it can parse again, to the same canonical text.
    assert.equal(canonicalize(accepted(canonicalize(value))), canonicalize(value), c.name);
    acceptedCount++;
  }
  assert.equal(cases.length - acceptedCount, Object.keys(Y_EXCEPTIONS).length, 'every exception exists');
  t.diagnostic(`y_: ${acceptedCount} accepted, ${cases.length - acceptedCount} refused as duplicates`);
});

test('JSONTestSuite n_: every case refused with a json_* BatonError, none crashes', (t) => {
  const cases = readCases('test_parsing', 'n_');
  assert.ok(cases.length > 0);
  const byCode = new Map<string, number>();
  for (const c of cases) {
    const result = outcome(c.bytes);
    assert.ok(!result.ok, `${c.name} was accepted`);
    byCode.set(result.error.code, (byCode.get(result.error.code) ?? 0) + 1);
  }
  // A recursive parser would overflow here; this one stops at the depth limit.
  refusal(
    readFileSync(join(suiteDir, 'test_parsing', 'n_structure_100000_opening_arrays.json')),
    'json_too_deep',
  );
  t.diagnostic(`n_: ${cases.length} refused (${[...byCode].map(([k, v]) => `${k} ${v}`).join(', ')})`);
});

test('JSONTestSuite i_: every case has its documented verdict', (t) => {
  const cases = readCases('test_parsing', 'i_');
  assert.deepStrictEqual(cases.map((c) => c.name).sort(), Object.keys(I_VERDICTS).sort(), 'table = files');
  for (const c of cases) checkVerdict(c, I_VERDICTS[c.name] ?? assert.fail(c.name));
  t.diagnostic(`i_: ${cases.length} cases checked against their verdicts`);
});

test('JSONTestSuite test_transform: every file has its documented verdict', (t) => {
  const cases = readCases('test_transform');
  assert.deepStrictEqual(cases.map((c) => c.name).sort(), Object.keys(TRANSFORM_VERDICTS).sort());
  for (const c of cases) checkVerdict(c, TRANSFORM_VERDICTS[c.name] ?? assert.fail(c.name));
  t.diagnostic(`test_transform: ${cases.length} files checked against their verdicts`);
});

test('docs/json.md publishes exactly the verdicts these tests enforce', (t) => {
  const documented = documentedVerdicts();
  const enforced = { ...I_VERDICTS, ...TRANSFORM_VERDICTS };
  assert.deepStrictEqual(Object.fromEntries(documented), enforced);
  t.diagnostic(`docs/json.md: ${documented.size} verdict rows match`);
});

test('every canonical number form in the RFC 8785 vectors re-parses to the same double, or sits in the refused band', (t) => {
  const lines = readFileSync(join(vectorsDir, 'jcs-rfc8785', 'es6numbers-first10000.txt'), 'utf8')
    .split('\n')
    .filter((line) => line !== '');
  const view = new DataView(new ArrayBuffer(8));
  let refused = 0;
  for (const line of lines) {
    const [hex = '', text = ''] = line.split(',');
    view.setBigUint64(0, BigInt(`0x${hex}`));
    const expected = view.getFloat64(0);
    const magnitude = Math.abs(expected);
    if (magnitude > Number.MAX_SAFE_INTEGER && magnitude < 1e21) {
      refusal(text, 'json_number_out_of_range');
      refused++;
    } else {
      assert.ok(Object.is(accepted(text), expected === 0 ? 0 : expected), line);
    }
  }
  assert.ok(refused > 0 && refused < lines.length);
  t.diagnostic(
    `es6 numbers: ${lines.length - refused} re-parsed exactly, ${refused} refused (2^53 <= |x| < 1e21)`,
  );
});
