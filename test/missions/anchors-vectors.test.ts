/**
 * MCO-03 integrity anchors: the build spec's A4 vectors (recomputed there with JCS + SHA-256),
 * directly and through `baton missions anchor`, and the refusals: unknown algorithm prefixes
 * (A7.25: `sha-512:`, `SHA-256:`), duplicate members, the wrong shape per anchor kind.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { main } from '../../src/cli/baton.js';
import type { CliIo } from '../../src/cli/io.js';
import { anchorMatches, missionAnchor, missionAnchorOfText, parseAnchor } from '../../src/missions/index.js';
import { AUTHORITY_SET } from './issuer-support.js';

const ISS = 'https://as.example.com';
const INTENT_TEXT =
  '{"goal":"Reconcile Q3 invoices","resources":["https://erp.example.com"],"mission_expiry":"2026-12-31T23:59:59Z"}';
const INTENT_HASH = 'sha-256:P38IRTmTaUESJ5RpCw1WXmIqfsQmYek7zxiQWERcq-E';
const AUTHORITY_HASH = 'sha-256:-rBZZJ8tVIyGoR1tBg6BO6QG0kimVvef8vjigpoVuPw';

const dir = mkdtempSync(join(tmpdir(), 'baton-anchors-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function captureIo(): CliIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout: (s: string) => void (io.out += s),
    stderr: (s: string) => void (io.err += s),
    readStdin: () => Promise.resolve(Buffer.alloc(0)),
  };
  return io;
}

test('MCO-03/A4: intent_hash of the draft intent under https://as.example.com', () => {
  assert.equal(missionAnchorOfText('intent', ISS, INTENT_TEXT), INTENT_HASH);
});

test('MCO-03/A4: authority_hash of the two-entry Authority Set', () => {
  assert.equal(missionAnchor('authority', ISS, AUTHORITY_SET), AUTHORITY_HASH);
  assert.equal(anchorMatches('authority', ISS, AUTHORITY_SET, AUTHORITY_HASH), true);
});

test('MCO-03: the anchor binds iss, typ and array order', () => {
  assert.notEqual(
    missionAnchor('authority', 'https://as.example.com/', AUTHORITY_SET),
    AUTHORITY_HASH,
    'URIs are byte-equal, not normalised',
  );
  assert.notEqual(
    missionAnchor('authority', ISS, [...AUTHORITY_SET].reverse()),
    AUTHORITY_HASH,
    'array order is significant',
  );
  assert.equal(anchorMatches('authority', ISS, [AUTHORITY_SET[0]!], AUTHORITY_HASH), false);
});

test('MCO-03/A7.25: unknown algorithm prefixes are refused, never read as sha-256', () => {
  for (const anchor of [
    'sha-512:P38IRTmTaUESJ5RpCw1WXmIqfsQmYek7zxiQWERcq-E',
    'SHA-256:P38IRTmTaUESJ5RpCw1WXmIqfsQmYek7zxiQWERcq-E',
    'P38IRTmTaUESJ5RpCw1WXmIqfsQmYek7zxiQWERcq-E',
  ]) {
    assert.throws(
      () => parseAnchor(anchor),
      (error: { code?: string }) =>
        error.code === 'digest_unsupported_algorithm' || error.code === 'digest_malformed',
    );
    assert.throws(() => anchorMatches('intent', ISS, JSON.parse(INTENT_TEXT) as never, anchor));
  }
  assert.throws(() => parseAnchor('sha-256:P38IRTmTaUESJ5RpCw1WXmIqfsQmYek7zxiQWERcq-F'), {
    code: 'digest_malformed',
  });
});

test('MCO-03: duplicate member names are refused before canonicalisation; shapes per kind', () => {
  assert.throws(() => missionAnchorOfText('intent', ISS, '{"goal":"a","goal":"b"}'), {
    code: 'json_duplicate_member',
  });
  assert.throws(() => missionAnchor('authority', ISS, { not: 'an array' }), { code: 'input_invalid' });
  assert.throws(() => missionAnchor('intent', ISS, []), { code: 'input_invalid' });
});

test('MCO-03/A7.25: baton missions anchor intent|authority FILE --iss URL reproduces the vectors', async () => {
  const intentFile = join(dir, 'intent.json');
  const authorityFile = join(dir, 'authority.json');
  writeFileSync(intentFile, INTENT_TEXT);
  writeFileSync(authorityFile, JSON.stringify(AUTHORITY_SET));
  for (const [kind, file, want] of [
    ['intent', intentFile, INTENT_HASH],
    ['authority', authorityFile, AUTHORITY_HASH],
  ] as const) {
    const io = captureIo();
    assert.equal(await main(['missions', 'anchor', kind, file, '--iss', ISS], io), 0, io.err);
    assert.equal(io.out, `${want}\n`);
  }
  const dup = join(dir, 'dup.json');
  writeFileSync(dup, '{"goal":"a","goal":"b"}');
  const io = captureIo();
  assert.equal(await main(['missions', 'anchor', 'intent', dup, '--iss', ISS], io), 2);
  assert.match(io.err, /json_duplicate_member/);
  assert.equal(await main(['missions', 'anchor', 'intent', intentFile], captureIo()), 2, '--iss is required');
});
