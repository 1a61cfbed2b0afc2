/**
 * The published JSON Schema (schemas/baton.config.schema.json) and the code's reader
 * (src/cli/config/read.ts) agree: every example either both accept or both refuse, and the code
 * refuses with `config_invalid` naming a path. The rules a JSON Schema cannot say (uniqueness
 * within the file, one limit compared with another) are listed apart: the schema accepts them, the code refuses them.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { readConfig } from '../../src/cli/config/read.js';
import { exportEd25519PublicJwk, exportPublicPem, generateEd25519KeyPair } from '../../src/core/ed25519.js';
import { isBatonError } from '../../src/core/errors.js';
import { parseStrictJson } from '../../src/core/json.js';
import { MAX_PRODUCER_ID } from '../../src/observations/index.js';
import { repoRoot } from '../support/paths.js';

type Json = Record<string, unknown>;

const schema = JSON.parse(
  readFileSync(join(repoRoot, 'schemas', 'baton.config.schema.json'), 'utf8'),
) as Json;
const validate = new Ajv2020({ allErrors: true, strict: true, strictRequired: false }).compile(schema);
const example = parseStrictJson(readFileSync(join(repoRoot, 'examples', 'baton.config.json'))) as Json;
const domain = example['domain'] as Json;
const limits = domain['limits'] as Json;
const paths = domain['bypassPaths'] as Json[];

function codeAccepts(value: unknown): boolean {
  try {
    readConfig(value);
    return true;
  } catch (error) {
    assert.ok(isBatonError(error, 'config_invalid'), `a typed config_invalid, got ${String(error)}`);
    assert.match(error.message, /^\$/, 'the refusal names a path');
    return false;
  }
}

const min = { format: 'baton.config/1' };
const acme = generateEd25519KeyPair();
const jwk = exportEd25519PublicJwk(acme.publicKey);
const producerOf = (length: number): string => `urn:example:${'p'.repeat(length - 'urn:example:'.length)}`;
const withProducer = (p: Json): Json => ({ ...min, producers: [{ producer: 'urn:example:acme', ...p }] });
/** A small-order point (the identity): 43 base64url characters the key policy refuses. */
const SMALL_ORDER_X = Buffer.from(`01${'00'.repeat(31)}`, 'hex').toString('base64url');
const withDomain = (d: Json): Json => ({ ...min, domain: d });
const withLimits = (l: Json): Json => withDomain({ ...domain, limits: { ...limits, ...l } });

const VALID: readonly [string, unknown][] = [
  ['the shipped example', example],
  ['only the format', min],
  ['an editor $schema hint', { ...min, $schema: './x.json' }],
  ['an inline profile document', { ...min, profiles: [{ document: { any: 'thing' } }] }],
  [
    'a profile file pinned to a sandbox',
    { ...min, profiles: [{ file: 'p.json', pinToSandbox: 'http://127.0.0.1:4010' }] },
  ],
  ['tokens without a file', { ...min, tokens: { create: [{ name: 'ops bot', role: 'admin' }] } }],
  ['empty lists', { ...min, profiles: [], authorities: [], tokens: { create: [] } }],
  [
    'an issuer pin file with a push bearer reference',
    { ...min, issuers: [{ file: 'i.json', pushBearerRef: 'env:B' }] },
  ],
  [
    'an inline issuer pin with a poll bearer file',
    { ...min, issuers: [{ pin: {}, pollBearerRef: 'file:b.txt' }] },
  ],
  ['a producer key as a JWK with its kid', withProducer({ keys: [jwk] })],
  [
    'a producer key as a bare JWK, a PEM and a file',
    withProducer({
      keys: [
        { kty: 'OKP', crv: 'Ed25519', x: jwk.x },
        { pem: exportPublicPem(generateEd25519KeyPair().publicKey) },
        { file: 'k.pem' },
      ],
    }),
  ],
  ['a producer with no keys (unpinned)', withProducer({ keys: [] })],
  [
    'the longest producer id a record may name',
    withProducer({ producer: producerOf(MAX_PRODUCER_ID), keys: [] }),
  ],
  ['a JWK with alg and use', withProducer({ keys: [{ ...jwk, alg: 'EdDSA', use: 'sig' }] })],
  ['bypass paths in another order', withDomain({ ...domain, bypassPaths: [...paths].reverse() })],
  ['the largest entry window', withLimits({ entryWindowSeconds: 30 * 86_400 })],
  [
    'an authority of the largest safe total',
    { ...min, authorities: [{ id: 'a', unit: 'u', total: Number.MAX_SAFE_INTEGER }] },
  ],
];

const INVALID: readonly [string, unknown][] = [
  ['not an object', []],
  ['no format', {}],
  ['another format', { format: 'baton.config/2' }],
  ['an unknown top-level member', { ...min, extra: 1 }],
  ['an issuer with both a file and a pin', { ...min, issuers: [{ file: 'i.json', pin: {} }] }],
  ['an issuer with neither', { ...min, issuers: [{ pushBearerRef: 'env:B' }] }],
  ['an issuer bearer given in clear', { ...min, issuers: [{ file: 'i.json', pushBearerRef: 'hunter2' }] }],
  ['an issuer with an unknown member', { ...min, issuers: [{ file: 'i.json', pushBearer: 'x' }] }],
  ['a domain without limits', withDomain({ id: 'd', bypassPaths: paths })],
  ['a domain named local (urn:baton:local is the local producer)', withDomain({ ...domain, id: 'local' })],
  ['a domain named LOCAL', withDomain({ ...domain, id: 'LOCAL' })],
  ['a producer in Baton’s namespace', withProducer({ producer: 'urn:baton:acme', keys: [jwk] })],
  ['the local producer', withProducer({ producer: 'URN:Baton:local', keys: [jwk] })],
  ['a producer that is not a URI', withProducer({ producer: 'acme', keys: [jwk] })],
  [
    'a producer id longer than a record may name',
    withProducer({ producer: producerOf(MAX_PRODUCER_ID + 1), keys: [] }),
  ],
  ['a producer without keys', { ...min, producers: [{ producer: 'urn:example:acme' }] }],
  ['an RSA producer key', withProducer({ keys: [{ kty: 'RSA', n: 'AQAB', e: 'AQAB' }] })],
  ['an X25519 producer key', withProducer({ keys: [{ kty: 'OKP', crv: 'X25519', x: jwk.x }] })],
  ['a private producer JWK', withProducer({ keys: [{ ...jwk, d: jwk.x }] })],
  ['a producer key x too short', withProducer({ keys: [{ ...jwk, x: 'AAAA' }] })],
  ['a producer key with pem and file', withProducer({ keys: [{ pem: 'x', file: 'k.pem' }] })],
  ['a producer key alg other than EdDSA', withProducer({ keys: [{ ...jwk, alg: 'ES256' }] })],
  ['seventeen producer keys', withProducer({ keys: Array.from({ length: 17 }, () => ({ file: 'k.pem' })) })],
  ['a domain id with a space', withDomain({ ...domain, id: 'my domain' })],
  ['a zero limit', withLimits({ maxPendingPerLineage: 0 })],
  ['a fractional limit', withLimits({ maxInFlightPerDomain: 1.5 })],
  ['a limit as a string', withLimits({ maxPendingPerDomain: '10' })],
  ['an entry window too long', withLimits({ entryWindowSeconds: 30 * 86_400 + 1 })],
  ['an unknown limit', withLimits({ maxSomething: 1 })],
  ['five bypass paths', withDomain({ ...domain, bypassPaths: paths.slice(1) })],
  [
    'a bypass kind twice (one missing)',
    withDomain({ ...domain, bypassPaths: [paths[0], ...paths.slice(0, 5)] }),
  ],
  [
    'an unknown bypass status',
    withDomain({ ...domain, bypassPaths: [{ ...paths[0], status: 'maybe' }, ...paths.slice(1)] }),
  ],
  [
    'an empty bypass description',
    withDomain({ ...domain, bypassPaths: [{ ...paths[0], description: '' }, ...paths.slice(1)] }),
  ],
  ['a profile with neither file nor document', { ...min, profiles: [{}] }],
  ['a profile with both file and document', { ...min, profiles: [{ file: 'p.json', document: {} }] }],
  ['a profile document that is an array', { ...min, profiles: [{ document: [] }] }],
  [
    'a profile pinned to a non-URL',
    { ...min, profiles: [{ file: 'p.json', pinToSandbox: '127.0.0.1:4010' }] },
  ],
  ['an unknown profile member', { ...min, profiles: [{ file: 'p.json', version: '1' }] }],
  ['an authority without a unit', { ...min, authorities: [{ id: 'a', total: 1 }] }],
  ['an authority total of zero', { ...min, authorities: [{ id: 'a', unit: 'u', total: 0 }] }],
  ['an authority unit too long', { ...min, authorities: [{ id: 'a', unit: 'u'.repeat(65), total: 1 }] }],
  ['tokens without create', { ...min, tokens: { file: 't.json' } }],
  ['an executor token', { ...min, tokens: { create: [{ name: 'x', role: 'executor' }] } }],
  ['a token name starting with a space', { ...min, tokens: { create: [{ name: ' x', role: 'operator' }] } }],
  ['an empty tokens file name', { ...min, tokens: { file: '', create: [] } }],
];

/** Beyond any JSON Schema: uniqueness within the file, limits compared with each other. */
const CODE_ONLY: readonly [string, unknown][] = [
  ['a per-lineage pending limit above the domain’s', withLimits({ maxPendingPerLineage: 101 })],
  ['a per-lineage in-flight limit above the domain’s', withLimits({ maxInFlightPerLineage: 101 })],
  [
    'a producer twice',
    {
      ...min,
      producers: [
        { producer: 'urn:example:a', keys: [] },
        { producer: 'urn:example:a', keys: [] },
      ],
    },
  ],
  ['the same producer key twice', withProducer({ keys: [jwk, { kty: 'OKP', crv: 'Ed25519', x: jwk.x }] })],
  ['a small-order producer key', withProducer({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: SMALL_ORDER_X }] })],
  ['a kid not by the kid rule', withProducer({ keys: [{ ...jwk, kid: `sha256:${'0'.repeat(64)}` }] })],
  [
    'a PEM that holds no public key',
    withProducer({ keys: [{ pem: exportPublicPem(acme.publicKey).slice(0, 60) }] }),
  ],
  [
    'a private key PEM',
    withProducer({ keys: [{ pem: acme.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() }] }),
  ],
  [
    'an authority id twice',
    {
      ...min,
      authorities: [
        { id: 'a', unit: 'u', total: 1 },
        { id: 'a', unit: 'u', total: 1 },
      ],
    },
  ],
  [
    'a token name twice',
    {
      ...min,
      tokens: {
        create: [
          { name: 'x', role: 'operator' },
          { name: 'x', role: 'admin' },
        ],
      },
    },
  ],
];

test('the config schema and the code accept the same valid examples', () => {
  for (const [label, value] of VALID) {
    assert.equal(validate(value), true, `schema: ${label}: ${JSON.stringify(validate.errors)}`);
    assert.equal(codeAccepts(value), true, `code: ${label}`);
  }
});

test('the config schema and the code refuse the same invalid examples', () => {
  for (const [label, value] of INVALID) {
    assert.equal(validate(value), false, `schema should refuse: ${label}`);
    assert.equal(codeAccepts(value), false, `code should refuse: ${label}`);
  }
});

test("the rules beyond the schema (uniqueness, key validity) are the code's, and the schema says so in its description", () => {
  for (const [label, value] of CODE_ONLY) {
    assert.equal(validate(value), true, `schema cannot express: ${label}`);
    assert.equal(codeAccepts(value), false, `code refuses: ${label}`);
  }
  assert.match(String(schema['description']), /unique within the file/);
  assert.match(String(schema['description']), /not of small order/);
});

test('a duplicate member in the config file is refused by the strict parser', async () => {
  const { parseConfig } = await import('../../src/cli/config/read.js');
  assert.throws(
    () => parseConfig(Buffer.from('{"format":"baton.config/1","format":"baton.config/1"}')),
    (e: unknown) => isBatonError(e, 'json_duplicate_member'),
  );
});
