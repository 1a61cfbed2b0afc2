/**
 * The strict reader (B7 1–7, 15, 21; OBS-09, OBS-10, OBS-12, OBS-13): one refusal per rule, with
 * its code, rule name and JSON path, in the spec's validation order.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { digestJcs } from '../../src/core/digest.js';
import { isBatonError } from '../../src/core/errors.js';
import { readRecord, readRecordValue } from '../../src/observations/index.js';
import { EXAMPLE_BYTES, EXAMPLE_DIGEST, decidedRecord, example } from './support.js';

function refused(input: string | Uint8Array, code: string, rule: string, path?: string): void {
  assert.throws(
    () => readRecord(input),
    (err: unknown) => {
      assert.ok(isBatonError(err), String(err));
      assert.equal(err.code, code, err.message);
      assert.equal(err.details['rule'], rule, err.message);
      if (path !== undefined) assert.equal(err.details['path'], path, err.message);
      return true;
    },
  );
}

const text = (value: unknown): string => JSON.stringify(value);
const invalid = 'observation_record_invalid';

test('B7-1: the draft example validates unchanged and digests to the published value', () => {
  const { record, unapprovedLocators } = readRecord(EXAMPLE_BYTES);
  assert.equal(digestJcs(record), EXAMPLE_DIGEST);
  // Its locator is not an approved Baton location: flagged, never fetched (OBS-12).
  assert.deepEqual(unapprovedLocators, ['$.evidence[0].locator']);
});

test('B7-2 OBS-09: duplicate member names are refused, top level, nested and escaped', () => {
  const body = EXAMPLE_BYTES.toString('utf8');
  refused(body.replace('"version": "1",', '"version": "1", "version": "1",'), invalid, 'bytes', '$.version');
  refused(
    body.replace('"domain": "operator-device-1",', '"domain": "a", "domain": "b",'),
    invalid,
    'bytes',
    '$.domain',
  );
  refused(
    body.replace('"record_id":', '"record\\u005fid": "x", "record_id":'),
    invalid,
    'bytes',
    '$.record_id',
  );
});

test('B7-3 OBS-09: a record inside prose, with trailing text, or two concatenated objects is refused', () => {
  const body = EXAMPLE_BYTES.toString('utf8');
  refused(`Here is the record: ${body}`, invalid, 'bytes');
  refused(`${body} trailing`, invalid, 'bytes');
  refused(`${body}${body}`, invalid, 'bytes');
  refused(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), EXAMPLE_BYTES]), invalid, 'bytes');
  refused('[1]', invalid, 'type', '$');
});

test('B7-4 OBS-09 C-B3: unknown members, critical extensions and versions', () => {
  refused(text({ ...example(), colour: 'blue' }), invalid, 'unknown_member', '$.colour');
  refused(
    text({ ...example(), order: { domain: 'd', sequence: null, uncertainty_ms: null, x: 1 } }),
    invalid,
    'unknown_member',
    '$.order.x',
  );
  refused(
    text({ ...example(), extensions: { 'urn:x:ext': 1 }, crit: ['urn:x:ext'] }),
    'observation_profile_unsupported',
    'crit',
    '$.crit[0]',
  );
  const kept = readRecord(text({ ...example(), extensions: { 'urn:x:note': { a: 1 } } }));
  assert.deepEqual(kept.uninterpreted, ['urn:x:note']);
  refused(text({ ...example(), version: '2' }), 'observation_profile_unsupported', 'version', '$.version');
  refused(text({ ...example(), version: 1 }), invalid, 'type', '$.version');
  refused(
    text({ ...example(), profile: 'urn:other:1' }),
    'observation_profile_unsupported',
    'profile',
    '$.profile',
  );
  const { record_id: _dropped, ...missing } = example();
  refused(text(missing), invalid, 'missing_member', '$.record_id');
});

test('B7-5 OBS-13 C-B6: reasons, references and status spelling', () => {
  const inv = (i: Record<string, unknown>): string => text({ ...example(), invariants: [i] });
  refused(
    inv({ dimension: 'memory', status: 'NOT_APPLICABLE', reference: null, reason: null }),
    invalid,
    'reason_required',
    '$.invariants[0].reason',
  );
  refused(
    inv({ dimension: 'memory', status: 'UNKNOWN', reference: null, reason: null }),
    invalid,
    'reason_required',
  );
  refused(
    inv({ dimension: 'memory', status: 'MATCH', reference: null, reason: null }),
    invalid,
    'reference_required',
    '$.invariants[0].reference',
  );
  refused(
    inv({ dimension: 'memory', status: 'match', reference: 'x', reason: null }),
    invalid,
    'enum',
    '$.invariants[0].status',
  );
  refused(text({ ...example(), invariants: [] }), invalid, 'array_length', '$.invariants');
});

test('B7-6 OBS-10 C-B4: byte digests state what they digest', () => {
  const ev = (d: unknown): string =>
    text({
      ...example(),
      evidence: [
        { locator: 'urn:baton:x', method: 'direct_capture', verification: 'SIMULATED', byte_digest: d },
      ],
    });
  refused(ev(EXAMPLE_DIGEST), invalid, 'type', '$.evidence[0].byte_digest');
  refused(
    ev({ algorithm: 'sha-256', artifact: 'a', value: EXAMPLE_DIGEST }),
    invalid,
    'missing_member',
    '$.evidence[0].byte_digest.representation',
  );
  refused(
    ev({ algorithm: 'sha-256', representation: 'jcs', value: EXAMPLE_DIGEST }),
    invalid,
    'missing_member',
    '$.evidence[0].byte_digest.artifact',
  );
  refused(
    ev({ algorithm: 'sha-256', representation: 'jcs', artifact: 'a', value: `sha256:${'ab'.repeat(32)}` }),
    invalid,
    'digest',
    '$.evidence[0].byte_digest.value',
  );
  refused(
    ev({ algorithm: 'sha-256', representation: 'canonical', artifact: 'a', value: EXAMPLE_DIGEST }),
    invalid,
    'enum',
  );
  readRecord(ev({ algorithm: 'sha-256', representation: 'jcs', artifact: 'a', value: EXAMPLE_DIGEST }));
});

test('B7-7 OBS-05/06: verification classes and methods are closed and not interchangeable', () => {
  const ev = (method: string, verification: string): string =>
    text({ ...example(), evidence: [{ locator: 'urn:baton:x', method, verification, byte_digest: null }] });
  refused(ev('direct_capture', 'VERIFIED'), invalid, 'enum', '$.evidence[0].verification');
  refused(ev('MANUAL_UNATTESTED', 'operator_transcription'), invalid, 'enum', '$.evidence[0].method');
});

test('B3.1: the validation order names the first failing pass, not a later one', () => {
  // An unknown member (pass 2) beside a bad version (pass 3) and a bad status (pass 4).
  const record = {
    ...example(),
    version: '2',
    extra: true,
    invariants: [{ dimension: 'memory', status: 'x', reference: null, reason: null }],
  };
  refused(text(record), invalid, 'unknown_member', '$.extra');
  const { extra: _e, ...noExtra } = record;
  refused(text(noExtra), 'observation_profile_unsupported', 'version');
  refused(text({ ...noExtra, version: '1' }), invalid, 'enum');
  refused(text({ ...example(), observed_at: '2026-10-12 04:05:00' }), invalid, 'time', '$.observed_at');
});

test('B7-15 OBS-12: a locator outside the approved prefixes is flagged, never fetched', () => {
  const r = readRecordValue(
    decidedRecord({
      evidence: [
        {
          locator: 'https://attacker.example/x',
          method: 'direct_capture',
          verification: 'SIMULATED',
          byte_digest: null,
        },
      ],
    }),
  );
  assert.deepEqual(r.unapprovedLocators, ['$.evidence[0].locator']);
  const approved = readRecordValue(
    decidedRecord({
      evidence: [
        {
          locator: 'https://attacker.example/x',
          method: 'direct_capture',
          verification: 'SIMULATED',
          byte_digest: null,
        },
      ],
    }),
    { approvedLocatorPrefixes: ['https://attacker.example/'] },
  );
  assert.deepEqual(approved.unapprovedLocators, []);
});

test('B7-21 OBS-30: credentials never ride in a record', () => {
  refused(
    text({ ...example(), extensions: { 'urn:x:e': { credential: 'c' } } }),
    invalid,
    'secret_member',
    '$.extensions.urn:x:e.credential',
  );
  refused(text({ ...example(), extensions: { 'urn:x:e': [{ secret: 'c' }] } }), invalid, 'secret_member');
  refused(text({ ...example(), credential: 'x' }), invalid, 'unknown_member', '$.credential');
  for (const locator of [
    'Bearer abcdef',
    'https://h.example/x?access_token=abc',
    'urn:baton:eyJhbGciOi.eyJzdWIiOi.sig',
  ]) {
    refused(
      text({
        ...example(),
        evidence: [{ locator, method: 'direct_capture', verification: 'SIMULATED', byte_digest: null }],
      }),
      invalid,
      'credential_in_locator',
      '$.evidence[0].locator',
    );
  }
});

test('B7-21 OBS-12: a bearer-token-shaped locator in references[] is refused too', () => {
  const digest = 'sha-256:54hNl1a1auKkbkc-4gcnX-pKHljqto4dxHbYbZKtQG0';
  refused(
    text({
      ...example(),
      references: [{ type: 'aatr', digest, locator: 'https://h.example/r?access_token=abc' }],
    }),
    invalid,
    'credential_in_locator',
    '$.references[0].locator',
  );
  assert.ok(
    readRecordValue({ ...example(), references: [{ type: 'aatr', digest, locator: 'urn:baton:r' }] }),
  );
});

test('B7-21 OBS-12 ¶25: one credential check for every string of a record, not only evidence locators', () => {
  const digest = 'sha-256:54hNl1a1auKkbkc-4gcnX-pKHljqto4dxHbYbZKtQG0';
  const evidence = [
    { locator: 'urn:x:1', method: 'direct_capture', verification: 'SIMULATED', byte_digest: null },
  ];
  const reference = (ref: string) => ({
    ...example(),
    evidence,
    invariants: [{ dimension: 'state', status: 'MATCH', reference: ref, reason: null }],
  });
  const credentials = [
    'https://erp.example/api?access_token=sk_live_abc123',
    'Bearer eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2ln',
    'https://user:pass@erp.example/r',
    'Basic dXNlcjpwYXNz',
    'https://h.example/r;token=abc',
    'https://h.example/r?api_key=abc',
    'https://h.example/r?X-Api-Key=abc',
    'https://h.example/r?client_secret=abc',
    'https://blob.example/c/b?sv=2020&sig=abc%3D',
    'https://h.example/r#id_token=abc',
    'urn:x:eyJhbGc.eyJzdWI.c2ln',
  ];
  for (const credential of credentials) {
    refused(text(reference(credential)), invalid, 'credential_in_locator', '$.invariants[0].reference');
    refused(
      text({ ...example(), evidence: [{ ...evidence[0], locator: credential }] }),
      invalid,
      'credential_in_locator',
      '$.evidence[0].locator',
    );
  }
  const secretUrl = 'https://h.example/p?access_token=abc';
  const elsewhere: [Record<string, unknown>, string][] = [
    [{ lineage: { parents: [secretUrl], actions: [], coverage: null } }, '$.lineage.parents[0]'],
    [{ lineage: { parents: [], actions: [secretUrl], coverage: null } }, '$.lineage.actions[0]'],
    [{ references: [{ type: 'aatr', digest, locator: secretUrl }] }, '$.references[0].locator'],
    [{ source_runtime: secretUrl }, '$.source_runtime'],
    [{ scope_id: secretUrl }, '$.scope_id'],
    [{ run_id: secretUrl }, '$.run_id'],
    [
      {
        outcome: {
          proposal: 'HALT',
          admission: 'NOT_MEASURED',
          effect: 'NOT_MEASURED',
          operation_ref: secretUrl,
        },
      },
      '$.outcome.operation_ref',
    ],
    [
      {
        evidence: [
          {
            ...evidence[0],
            byte_digest: { algorithm: 'sha-256', representation: 'raw', artifact: secretUrl, value: digest },
          },
        ],
      },
      '$.evidence[0].byte_digest.artifact',
    ],
    [{ limitations: [`fetched from ${secretUrl}`] }, '$.limitations[0]'],
    [{ extensions: { 'urn:x:e': { link: secretUrl } } }, '$.extensions.urn:x:e.link'],
    [{ extensions: { 'urn:x:e': ['Bearer abc.def'] } }, '$.extensions.urn:x:e[0]'],
  ];
  for (const [members, path] of elsewhere) {
    refused(text({ ...example(), ...members }), invalid, 'credential_in_locator', path);
  }
  // Ordinary words and URLs are not credentials: a tokenizer in a path or a query, a count of
  // tokens, a port, a user without a password, a reason that mentions bearer tokens.
  for (const ok of [
    'https://models.example/tokenizer.json',
    'https://models.example/m?tokenizer=bpe&token_count=3&max_tokens=8',
    'https://h.example:8443/r?key=order-42',
    'ssh://git@h.example/repo',
    'urn:baton:evidence:d:lineage:L#12',
  ]) {
    assert.ok(readRecordValue(reference(ok)), ok);
  }
  assert.ok(
    readRecordValue({
      ...example(),
      limitations: ['bearer tokens are never captured', 'Basic checks only'],
    }),
  );
});

test('B7-21 OBS-12: a member inside extensions whose name ends in a credential word is refused; qualifying words are not', () => {
  for (const name of [
    'client_secret',
    'api_key',
    'apiKey',
    'X-Api-Key',
    'bearer_token',
    'accessToken',
    'private_key',
    'password',
    'credentials',
    'authorization',
    'session_cookie',
  ]) {
    refused(
      text({ ...example(), extensions: { 'urn:x:e': { nested: [{ [name]: 'abc' }] } } }),
      invalid,
      'secret_member',
      `$.extensions.urn:x:e.nested[0].${name}`,
    );
  }
  refused(
    text({ ...example(), extensions: { 'urn:x:token': 'abc' } }),
    invalid,
    'secret_member',
    '$.extensions.urn:x:token',
  );
  assert.ok(
    readRecordValue({
      ...example(),
      extensions: {
        'urn:x:tokenizer': {
          token_count: 12,
          max_tokens: 8,
          tokenizer: 'bpe',
          key: 'order-42',
          secret_santa_round: 1,
        },
      },
    }),
  );
});

test('B2: order.sequence is decimal digits or null', () => {
  for (const sequence of ['forty-two', '4.2', '-1', ' 42', '42abc']) {
    refused(
      text({ ...example(), order: { domain: 'd', sequence, uncertainty_ms: null } }),
      invalid,
      'type',
      '$.order.sequence',
    );
  }
  for (const sequence of ['0', '42', null]) {
    assert.ok(readRecordValue({ ...example(), order: { domain: 'd', sequence, uncertainty_ms: null } }));
  }
});

test('OBS-13: a record without evidence cannot decide an invariant', () => {
  refused(
    text(decidedRecord({ evidence: [] })),
    invalid,
    'decided_without_evidence',
    '$.invariants[0].status',
  );
});

test('OBS-04/08: claimed independence needs disclosed co-location; a correction names its revision', () => {
  refused(text({ ...example(), independence_claimed: true }), invalid, 'independence_undisclosed');
  refused(text({ ...example(), supersedes: 'urn:x' }), invalid, 'analysis_revision_required');
});

test('U+0000 in any string is refused by the reader (rule type, at its path), as the store cannot keep it', () => {
  refused(text({ ...example(), scope_id: 'urn:x:a\u0000b' }), invalid, 'type', '$.scope_id');
  refused(text({ ...example(), limitations: ['fine', 'bad\u0000'] }), invalid, 'type', '$.limitations[1]');
  refused(
    text({ ...example(), extensions: { 'urn:example:ext': { note: '\u0000' } } }),
    invalid,
    'type',
    '$.extensions.urn:example:ext.note',
  );
});

test('authority_epoch of another kind says what the shape accepts', () => {
  for (const value of [1.5, -1, true, {}]) {
    assert.throws(
      () => readRecord(text({ ...example(), authority_epoch: value })),
      (err: unknown) =>
        isBatonError(err, invalid) &&
        err.details['rule'] === 'type' &&
        err.details['path'] === '$.authority_epoch' &&
        /must be a non-negative integer, a non-empty string or null/.test(err.message),
      JSON.stringify(value),
    );
  }
  for (const value of [0, 7, 'epoch-7', null]) readRecord(text({ ...example(), authority_epoch: value }));
});
