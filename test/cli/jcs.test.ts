import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, vectorsDir } from '../support/paths.js';
import { main } from '../../src/cli/baton.js';
import type { CliIo } from '../../src/cli/io.js';

function captureIo(stdin = ''): CliIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout: (s: string) => void (io.out += s),
    stderr: (s: string) => void (io.err += s),
    readStdin: () => Promise.resolve(Buffer.from(stdin, 'utf8')),
  };
  return io;
}

const jcsDir = join(vectorsDir, 'jcs-rfc8785');

test('baton jcs prints the RFC 8785 form of every vector, with no trailing newline', async (t) => {
  const names = readdirSync(join(jcsDir, 'input'));
  for (const name of names) {
    const io = captureIo();
    assert.equal(await main(['jcs', join(jcsDir, 'input', name)], io), 0, name);
    assert.equal(io.out, readFileSync(join(jcsDir, 'output', name), 'utf8'), name);
    assert.equal(io.err, '');
  }
  t.diagnostic(`checked ${names.length} vector files through the CLI`);
});

test('baton digest prints sha-256 + base64url of the JCS bytes (runtime draft parameter_digest vector)', async () => {
  const io = captureIo('{"payee":"Acme Supply Co","amount":"9000.00","currency":"USD","account":"****4417"}');
  assert.equal(await main(['digest', '-'], io), 0);
  assert.equal(io.out, 'sha-256:e7GXd0GWwOK2ezlb0CfUeYhjYOF1DE68_Gg0ofbr7do');
});

const invalid: [string, string, string][] = [
  ['malformed', '{"a":', 'json_malformed'],
  ['duplicate members', '{"a":1,"\\u0061":2}', 'json_duplicate_member'],
  ['lone surrogate', '["\\ud800"]', 'json_lone_surrogate'],
  ['non-finite number', '[1e400]', 'json_number_out_of_range'],
  ['trailing data', '{} {}', 'json_malformed'],
];

for (const command of ['jcs', 'digest']) {
  for (const [label, input, code] of invalid) {
    test(`baton ${command} refuses ${label}: nothing on stdout, ${code} on stderr, exit 2`, async () => {
      const io = captureIo(input);
      assert.equal(await main([command], io), 2);
      assert.equal(io.out, '');
      assert.match(io.err, new RegExp(`^error: ${code}: `));
    });
  }
}

test('baton --help, COMMAND --help, unknown commands and options', async () => {
  const help = captureIo();
  assert.equal(await main(['--help'], help), 0);
  assert.match(help.out, /jcs/);
  assert.match(help.out, /digest/);
  const sub = captureIo();
  assert.equal(await main(['jcs', '--help'], sub), 0);
  assert.match(sub.out, /^usage: baton jcs/);
  const unknown = captureIo();
  assert.equal(await main(['no-such-command'], unknown), 2);
  assert.match(unknown.err, /unknown command/);
  const badOption = captureIo('{}');
  assert.equal(await main(['jcs', '--frobnicate'], badOption), 2);
  assert.match(badOption.err, /^error: usage:/);
  const missing = captureIo();
  assert.equal(await main(['jcs', join(repoRoot, 'no-such-file.json')], missing), 2);
  assert.match(missing.err, /^error: usage: cannot read/);
});

test(
  'the installed bin runs as a real process (dist/src/cli/main.js)',
  { skip: !import.meta.url.endsWith('.js') && 'runs from the compiled tree only' },
  () => {
    const bin = join(repoRoot, 'dist', 'src', 'cli', 'main.js');
    const ok = spawnSync(process.execPath, [bin, 'jcs'], { input: '{"b":[1e30,4.50],"a":"\\u00e9"}' });
    assert.equal(ok.status, 0);
    assert.equal(ok.stdout.toString('utf8'), '{"a":"é","b":[1e+30,4.5]}');
    const bad = spawnSync(process.execPath, [bin, 'digest'], { input: '{"a":1,"a":2}' });
    assert.equal(bad.status, 2);
    assert.equal(bad.stdout.length, 0);
    assert.match(bad.stderr.toString(), /json_duplicate_member/);
  },
);
