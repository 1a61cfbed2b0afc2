import { test } from 'node:test';
import assert from 'node:assert/strict';
import { commands } from '../../src/cli/commands/index.js';
import { EXIT } from '../../src/cli/io.js';
import { baton } from '../config/support.js';

const withVerbs = commands.filter((c) => c.verbs !== undefined);

test('the commands made of verbs declare them, and each verb is in the command usage', () => {
  const names = withVerbs.map((c) => c.name).sort();
  assert.deepEqual(names, [
    'authorities',
    'domain',
    'harness',
    'lease',
    'log',
    'missions',
    'observe',
    'occurrences',
    'producers',
    'profiles',
    'stop-matrix',
    'tokens',
  ]);
  for (const c of withVerbs) {
    assert.ok((c.verbs ?? []).length > 0, c.name);
    for (const verb of c.verbs ?? [])
      assert.ok(c.usage.includes(`baton ${c.name} ${verb}`), `${c.name} ${verb}`);
    // And the other way: a verb the usage teaches is declared, so its --help is not refused.
    const taught = new Set(
      [...c.usage.matchAll(new RegExp(`baton ${c.name} ([a-z][a-z-]*)`, 'g'))].map((m) => m[1]),
    );
    assert.deepEqual([...taught].sort(), [...(c.verbs ?? [])].sort(), `${c.name}: usage against verbs`);
  }
});

test('COMMAND TYPO --help is refused as a usage error naming the typo, not answered with exit 0', async () => {
  for (const c of withVerbs) {
    const ran = await baton([c.name, 'bogus', '--help']);
    assert.equal(ran.code, EXIT.usage, c.name);
    assert.equal(ran.out, '', c.name);
    assert.match(ran.err, new RegExp(`unknown ${c.name} verb 'bogus'`), c.name);
    // Without --help the command refuses the same typo itself, with the same exit code.
    assert.equal((await baton([c.name, 'bogus'])).code, EXIT.usage, `${c.name} without --help`);
  }
});

test('COMMAND --help, COMMAND VERB --help and help COMMAND still print the usage and exit 0', async () => {
  for (const c of withVerbs) {
    for (const argv of [
      [c.name, '--help'],
      [c.name, '-h'],
      ['help', c.name],
    ]) {
      const ran = await baton(argv);
      assert.equal(ran.code, EXIT.ok, argv.join(' '));
      assert.equal(ran.out, c.usage, argv.join(' '));
    }
    for (const verb of c.verbs ?? []) {
      const ran = await baton([c.name, verb, '--help']);
      assert.equal(ran.code, EXIT.ok, `${c.name} ${verb} --help`);
      assert.equal(ran.err, '', `${c.name} ${verb} --help`);
    }
  }
});

test('COMMAND without its verb, and baton without a command, are usage errors on stderr (exit 2)', async () => {
  for (const c of withVerbs) {
    const ran = await baton([c.name]);
    assert.equal(ran.code, EXIT.usage, c.name);
    assert.equal(ran.out, '', `${c.name}: nothing on stdout`);
    assert.ok(
      ran.err.startsWith(`error: usage: baton ${c.name} needs one of: ${(c.verbs ?? []).join(', ')}\n`),
    );
    assert.ok(ran.err.endsWith(c.usage), `${c.name}: the usage follows`);
  }
  const bare = await baton([]);
  assert.deepEqual([bare.code, bare.out], [EXIT.usage, '']);
  assert.match(bare.err, /^error: usage: a command is needed\n\nbaton — /);
  const help = await baton(['--help']);
  assert.deepEqual([help.code, help.err], [EXIT.ok, '']);
  assert.match(help.out, /^baton — /);
});
