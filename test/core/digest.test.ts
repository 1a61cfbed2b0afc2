/**
 * Digests against the Mission drafts' own vectors, read from the draft text so the test follows the
 * draft: "Integrity Anchor Test Vectors" (intent_hash, authority_hash, issuer https://as.example.com)
 * in draft-mcguinness-oauth-mission.md and "Parameter Digest Worked Example" (parameter_digest) in
 * draft-mcguinness-oauth-mission-runtime.md. Plus the refusals of parseDigest and the PTCL hex form.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  digestBytes,
  digestEquals,
  digestJcs,
  integrityAnchor,
  isSha256HexTag,
  parseDigest,
  sha256,
  sha256HexTag,
  sha256HexTagJcs,
} from '../../src/core/digest.js';
import { BatonError } from '../../src/core/errors.js';
import type { BatonErrorCode } from '../../src/core/errors.js';
import { canonicalize } from '../../src/core/jcs.js';
import { parseStrictJson } from '../../src/core/json.js';
import { vectorsDir } from '../support/paths.js';

interface Block {
  readonly info: string;
  readonly body: string;
}

/** The text of the top-level section `# title`, up to the next top-level heading. */
function section(file: string, title: string): string {
  const lines = readFileSync(join(vectorsDir, 'mission-drafts', file), 'utf8').split('\n');
  const start = lines.findIndex((line) => line.startsWith(`# ${title}`));
  assert.ok(start >= 0, `${file}: no section "${title}"`);
  const end = lines.findIndex((line, i) => i > start && line.startsWith('# '));
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

/** The `~~~ info` fenced blocks of a section, in order. */
function fencedBlocks(text: string): Block[] {
  return [...text.matchAll(/^~~~ *(\w*)\n([\s\S]*?)\n~~~$/gm)].map((m) => ({
    info: m[1] ?? '',
    body: m[2] ?? '',
  }));
}

/** The drafts wrap canonical bytes for layout only: "remove the layout line breaks, adding no characters". */
const unwrap = (body: string): string => body.split('\n').join('');

/** `name = sha-256:...` lines of the section. */
function statedDigests(blocks: Block[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const { body } of blocks) {
    const m = /^(\w+) = (sha-256:\S+)$/.exec(body.trim());
    if (m?.[1] !== undefined && m[2] !== undefined) out.set(m[1], m[2]);
  }
  return out;
}

test('Mission draft integrity anchors: intent_hash and authority_hash, canonical bytes and digests', (t) => {
  const text = section('draft-mcguinness-oauth-mission.md', 'Integrity Anchor Test Vectors');
  const iss = /Both use the issuer `([^`]+)`/.exec(text)?.[1];
  assert.equal(iss, 'https://as.example.com');
  const anchors = [
    ...text.matchAll(/`(\w+_hash)`, over this [^`]+ as the envelope `value` with\s+`typ` `([^`]+)`/g),
  ];
  const blocks = fencedBlocks(text);
  const values = blocks.filter((b) => b.info === 'json');
  const canonical = blocks.filter((b) => b.info === 'text' && !/^\w+ = sha-256:/.test(b.body));
  const digests = statedDigests(blocks);
  assert.deepEqual(
    anchors.map((m) => m[1]),
    ['intent_hash', 'authority_hash'],
  );
  assert.equal(values.length, anchors.length);
  assert.equal(canonical.length, anchors.length);

  anchors.forEach((m, i) => {
    const [, name = '', typ = ''] = m;
    const value = parseStrictJson(values[i]?.body ?? '');
    const expectedBytes = unwrap(canonical[i]?.body ?? '');
    const expectedDigest = digests.get(name);
    assert.equal(canonicalize({ typ, iss, value }), expectedBytes, `${name} canonical bytes`);
    assert.equal(integrityAnchor(typ, iss, value), expectedDigest, name);
    assert.equal(digestBytes(expectedBytes), expectedDigest, `${name} over the printed bytes`);
    assert.ok(parseDigest(expectedDigest ?? '').equals(sha256(expectedBytes)));
  });
  // The draft still states the vectors this project was built against.
  assert.equal(digests.get('intent_hash'), 'sha-256:P38IRTmTaUESJ5RpCw1WXmIqfsQmYek7zxiQWERcq-E');
  assert.equal(digests.get('authority_hash'), 'sha-256:-rBZZJ8tVIyGoR1tBg6BO6QG0kimVvef8vjigpoVuPw');
  // typ domain-separates: the same value under the other typ is a different anchor.
  const intent = parseStrictJson(values[0]?.body ?? '');
  assert.notEqual(integrityAnchor('mission-authority-set', iss, intent), digests.get('intent_hash'));
  assert.notEqual(
    integrityAnchor('mission-intent', 'https://other.example.com', intent),
    digests.get('intent_hash'),
  );
  t.diagnostic(`reproduced ${anchors.length} integrity anchors and their canonical bytes`);
});

test('Mission runtime draft: parameter_digest of the worked example', (t) => {
  const text = section('draft-mcguinness-oauth-mission-runtime.md', 'Parameter Digest Worked Example');
  const blocks = fencedBlocks(text);
  const [parameters] = blocks.filter((b) => b.info === 'json');
  const [canonical] = blocks.filter((b) => b.info === 'text' && !/^\w+ = sha-256:/.test(b.body));
  const expected = statedDigests(blocks).get('parameter_digest');
  assert.equal(expected, 'sha-256:e7GXd0GWwOK2ezlb0CfUeYhjYOF1DE68_Gg0ofbr7do');
  const value = parseStrictJson(parameters?.body ?? '');
  assert.equal(canonicalize(value), unwrap(canonical?.body ?? ''));
  assert.equal(digestJcs(value), expected);
  // "any change to a normalized parameter yields a different digest"
  assert.notEqual(digestJcs({ ...(value as object), amount: '9000.01' }), expected);
  t.diagnostic('reproduced 1 parameter_digest and its canonical bytes');
});

test('parseDigest refuses unknown algorithms and malformed values', (t) => {
  const good = digestBytes('abc');
  const value = good.slice('sha-256:'.length);
  assert.equal(parseDigest(good).length, 32);
  const unsupported = [
    `sha256:${value}`,
    `SHA-256:${value}`,
    `sha-512:${value}`,
    `md5:${value}`,
    `:${value}`,
    sha256HexTag('abc'),
  ];
  const malformed = [
    value,
    'sha-256:',
    `sha-256:${value.slice(1)}`,
    `sha-256:${value}A`,
    `sha-256:${value}=`,
    `sha-256:${value.slice(0, -1)}F`, // non-zero padding bits: not canonical base64url
    `sha-256:+${value.slice(1)}`,
    `sha-256:/${value.slice(1)}`,
    `sha-256: ${value.slice(1)}`,
  ];
  const expectCode = (input: string, code: BatonErrorCode): void => {
    assert.throws(
      () => parseDigest(input),
      (e) => e instanceof BatonError && e.code === code,
      input,
    );
  };
  for (const input of unsupported) expectCode(input, 'digest_unsupported_algorithm');
  for (const input of malformed) expectCode(input, 'digest_malformed');
  t.diagnostic(`checked ${unsupported.length} unsupported and ${malformed.length} malformed digests`);
});

test('sha256HexTag: the PTCL form, on the FIPS 180-2 "abc" vector and over JCS bytes', () => {
  const tag = sha256HexTag('abc');
  assert.equal(tag, 'sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(sha256HexTag(Buffer.from('abc')), tag);
  assert.match(sha256HexTag(''), /^sha256:[0-9a-f]{64}$/);
  assert.equal(isSha256HexTag(tag), true);
  for (const bad of [tag.toUpperCase(), tag.slice(0, -1), `${tag}0`, digestBytes('abc'), 42, null]) {
    assert.equal(isSha256HexTag(bad), false, String(bad));
  }
  assert.equal(sha256HexTagJcs({ b: 1, a: [2, 'x'] }), sha256HexTag('{"a":[2,"x"],"b":1}'));
  assert.equal(digestJcs({ b: 1, a: [2, 'x'] }), digestBytes('{"a":[2,"x"],"b":1}'));
});

test('digestEquals compares whole strings, any length, without throwing', () => {
  const a = digestBytes('a');
  const b = digestBytes('b');
  assert.equal(digestEquals(a, `${a}`), true);
  assert.equal(digestEquals(a, b), false);
  assert.equal(digestEquals(a, a.slice(0, -1)), false);
  assert.equal(digestEquals(a, `${a}x`), false);
  assert.equal(digestEquals('', ''), true);
  assert.equal(digestEquals(sha256HexTag('a'), a), false);
  assert.equal(digestEquals('\u00e9', 'e\u0301'), false);
});
