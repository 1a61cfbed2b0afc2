/**
 * A JSON file a command reads is refused, when it is not strict JSON, with a line that names the
 * file and where the parser stopped (line, column, byte), keeping the parser's code and exit 2;
 * a tokens file that is not JSON is "not a baton.tokens/1 file" (docs/config.md).
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { positionIn } from '../../src/core/json.js';
import { startApi } from '../server/helpers.js';
import { baton, tempDir } from '../config/support.js';

const BROKEN = '{\n  "format": "baton.config/1",\n  "domain": { , }\n}\n';

test('the position counts lines and characters from 1, whatever the bytes', () => {
  assert.equal(positionIn(Buffer.from(BROKEN), 46), 'line 3, column 15 (byte 46)');
  assert.equal(positionIn(Buffer.from('{"é€": ?}'), 9), 'line 1, column 7 (byte 9)');
  assert.equal(positionIn(Buffer.from(''), 0), 'line 1, column 1 (byte 0)');
});

test('apply and serve --config name the malformed config file and the position, exit 2', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'bad.json');
  writeFileSync(file, BROKEN);
  const expected = `error: json_malformed: ${file} line 3, column 15 (byte 46): malformed JSON: expected a member name\n`;
  const applied = await baton(['apply', file, '--url', 'http://127.0.0.1:9', '--token', 'btk.tok_x.y']);
  assert.deepEqual([applied.code, applied.out, applied.err], [2, '', expected]);
  const served = await baton(['serve', '--db', join(dir, 'baton.db'), '--port', '0', '--config', file]);
  assert.deepEqual([served.code, served.err], [2, expected]);
  assert.deepEqual(readdirSync(dir), ['bad.json'], 'no database created');
});

test('profiles add names the malformed file; a duplicate member keeps its own code', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'p.json');
  writeFileSync(file, '{"a":1,\n"a":2}');
  const r = await baton(['profiles', 'add', file, '--url', 'http://127.0.0.1:9', '--token', 'btk.tok_x.y']);
  assert.equal(r.code, 2, r.err);
  assert.equal(
    r.err,
    `error: json_duplicate_member: ${file} line 2, column 1 (byte 8): JSON object has a duplicate member name\n`,
  );
});

test('a tokens file that is not JSON is not a baton.tokens/1 file, said before anything is minted', async (t) => {
  const api = await startApi(t);
  const dir = tempDir(t);
  const config = join(dir, 'c.json');
  writeFileSync(
    config,
    JSON.stringify({ format: 'baton.config/1', tokens: { create: [{ name: 'ci', role: 'operator' }] } }),
  );
  const tokens = join(dir, 'tk.json');
  writeFileSync(tokens, 'garbage\n');
  const before = await api.snapshot();
  const r = await baton(['apply', config, '--url', api.url, '--token', api.admin, '--tokens-file', tokens]);
  assert.equal(r.code, 2, r.err);
  assert.equal(
    r.err,
    `error: usage: ${tokens} is not a baton.tokens/1 file: line 1, column 1 (byte 0): malformed JSON: expected a JSON value\n`,
  );
  assert.equal(await api.snapshot(), before);
});

/** [command line, stdin, exit code, the line on stderr up to the position's end]. */
type Case = [string[], string, number, string];

test('every command reading a JSON file names it (stdin for -) and the position, keeping its code and exit', async (t) => {
  const dir = tempDir(t);
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, '{\n  "a": 1,\n  "b": ]\n}\n');
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const priv = join(dir, 'priv.pem');
  const pub = join(dir, 'pub.pem');
  writeFileSync(priv, privateKey.export({ type: 'pkcs8', format: 'pem' }));
  writeFileSync(pub, publicKey.export({ type: 'spki', format: 'pem' }));
  const issuers = join(dir, 'issuers.json');
  writeFileSync(issuers, JSON.stringify({ format: 'baton.config/1', issuers: [{ file: 'bad.json' }] }));
  const producers = join(dir, 'producers.json');
  const producer = { producer: 'urn:example:p', keys: [{ file: 'bad.json' }] };
  writeFileSync(producers, JSON.stringify({ format: 'baton.config/1', producers: [producer] }));
  const at = 'line 3, column 8 (byte 19)';
  const malformed = `json_malformed: ${bad} ${at}: malformed JSON`;
  const remote = ['--url', 'http://127.0.0.1:9', '--token', 'btk.tok_x.y'];
  const cases: Case[] = [
    [['jcs', bad], '', 2, `error: ${malformed}`],
    [['digest', '--json', '-'], readBad(bad), 2, `error: json_malformed: stdin ${at}: malformed JSON`],
    [['profiles', 'add', '-', ...remote], readBad(bad), 2, `error: json_malformed: stdin ${at}: malformed`],
    [
      ['domain', 'set', '-', ...remote],
      readBad(bad),
      2,
      `error: json_malformed: stdin ${at}: malformed JSON`,
    ],
    [['serve', '--db', join(dir, 'b.db'), '--port', '0', '--credentials', bad], '', 2, `error: ${malformed}`],
    [['missions', 'anchor', 'intent', bad, '--iss', 'https://issuer.example'], '', 2, `error: ${malformed}`],
    [
      ['missions', 'verify-set', '-', '--jwks', bad, '--iss', 'https://i.example', '--aud', 'a'],
      '',
      2,
      `error: ${malformed}`,
    ],
    [
      ['lease', 'sign', '--key', priv, bad],
      '',
      2,
      `error: ERR_LEASE_MALFORMED: ${bad} ${at}: lease is not strict JSON`,
    ],
    [
      ['lease', 'verify', '--key', pub, bad],
      '',
      1,
      `refused (CRYPTOGRAPHIC_BINDING): ${bad} ${at}: lease is not`,
    ],
    [['lease', 'verify', '--key', pub, '--inverse-payload', bad, '-'], '', 2, `error: ${malformed}`],
    [['harness', 'rebind', 'x', '--binding', bad, '--db', join(dir, 'b.db')], '', 2, `error: ${malformed}`],
    [
      ['observe', 'validate', '-'],
      readBad(bad),
      1,
      `refused: observation_record_invalid [bytes at $]: stdin ${at}: `,
    ],
    [
      ['apply', issuers, ...remote],
      '',
      2,
      `error: config_invalid: $.issuers[0].file: cannot read bad.json as JSON: ${at}: `,
    ],
    [
      ['apply', producers, ...remote],
      '',
      2,
      `error: config_invalid: $.producers[0].keys[0].file: bad.json holds neither a PEM public key nor a JSON JWK: ${at}: `,
    ],
  ];
  // Every case runs; the wrong ones are listed together.
  const wrong: string[] = [];
  for (const [argv, stdin, code, line] of cases) {
    const r = await baton(argv, stdin);
    if (r.code !== code || !r.err.startsWith(line)) wrong.push(`${argv.join(' ')} → ${r.code} ${r.err}`);
  }
  assert.deepEqual(wrong, []);
  assert.deepEqual(readdirSync(dir).sort(), [
    'bad.json',
    'issuers.json',
    'priv.pem',
    'producers.json',
    'pub.pem',
  ]);
});

function readBad(file: string): string {
  return readFileSync(file, 'utf8');
}
