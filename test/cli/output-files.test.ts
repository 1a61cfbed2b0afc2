/**
 * Output files that cannot be written are refused typed (`usage: cannot write FILE: …`, exit 2,
 * no stack), before the work whose result they would hold: `log export --out/--key`, `report
 * --out`, `conformance --out`, `lease keygen --out`. Nothing is left behind (no `.partial`), no
 * success is printed before the file is in place, and an existing key is never overwritten.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli/baton.js';
import { isBatonError } from '../../src/core/errors.js';
import { writeNewOutputFile, writeOutputFile, writeThroughPartial } from '../../src/cli/output-files.js';
import { openOccurrencesOnSqlite } from '../../src/store/occurrences.js';
import { domainConfig } from '../client/support.js';
import { captureIo, tempDir } from '../store/support.js';
import { spawnWatched } from '../support/child.js';

async function run(argv: string[]) {
  const io = captureIo();
  const code = await main(argv, io);
  return { code, out: io.out.join(''), err: io.err.join('') };
}

function refused(r: { code: number; out: string; err: string }, message: RegExp, what: string): void {
  assert.equal(r.code, 2, `${what}: ${r.err}`);
  assert.equal(r.out, '', what);
  assert.match(r.err, message, what);
  assert.match(r.err, /^error: usage: cannot (write|read) /, what);
  assert.doesNotMatch(r.err, /^\s+at /m, `${what}: no stack`);
  assert.doesNotMatch(r.err, /exported|internal/, `${what}: no success, no internal error`);
}

/** A set-up SQLite store (migrated, its domain key beside it, configured) in a fresh folder. */
async function store(t: Parameters<typeof tempDir>[0]): Promise<{ dir: string; db: string }> {
  const dir = tempDir(t);
  const db = join(dir, 'baton.db');
  const opened = await openOccurrencesOnSqlite(db);
  try {
    await opened.service.configureDomain(domainConfig() as never);
  } finally {
    await opened.close();
  }
  return { dir, db };
}

test('log export --out into a missing folder, onto a folder; --key a folder: refused, nothing left', async (t) => {
  const { dir, db } = await store(t);
  const before = readdirSync(dir).sort();
  const missing = join(dir, 'nonexistent', 'x.jsonl');
  refused(
    await run(['log', 'export', '--db', db, '--out', missing]),
    /^error: usage: cannot write .*x\.jsonl: no folder .*nonexistent\n$/,
    'missing folder',
  );
  const adir = join(dir, 'adir');
  mkdirSync(adir);
  refused(
    await run(['log', 'export', '--db', db, '--out', adir]),
    /^error: usage: cannot write .*adir: it is a folder\n$/,
    'onto a folder',
  );
  refused(
    await run(['log', 'export', '--db', db, '--key', adir]),
    /^error: usage: cannot read the key file .*adir: it is a folder \(EISDIR\)\n$/,
    '--key a folder',
  );
  assert.deepEqual(readdirSync(dir).sort(), [...before, 'adir'].sort(), 'no .partial, no other file');
  assert.deepEqual(readdirSync(adir), []);

  const out = join(dir, 'log.jsonl');
  const ok = await run(['log', 'export', '--db', db, '--out', out]);
  assert.equal(ok.code, 0, ok.err);
  assert.match(ok.err, /^exported \d+ events in \d+ subjects; checkpoint signed by sha256:/);
  assert.ok(readFileSync(out, 'utf8').length > 0);
  assert.deepEqual(readdirSync(dir).sort(), [...before, 'adir', 'log.jsonl'].sort());
});

test("log export with another store's key (beside the database or --key): domain_conflict, exit 1, nothing written", async (t) => {
  const a = await store(t);
  const b = await store(t);
  const keyA = `${a.db}.domain-key.pem`;
  const keyB = `${b.db}.domain-key.pem`;
  const saved = join(a.dir, 'a.saved.pem');
  renameSync(keyA, saved);
  copyFileSync(keyB, keyA);
  const before = readdirSync(a.dir).sort();
  const out = join(a.dir, 'log.jsonl');
  for (const [argv, where] of [
    [
      ['--out', out],
      /the domain key file .*baton\.db\.domain-key\.pem holds key sha256:\w+, but this database's domain key is sha256:\w+: put that key's file at /,
    ],
    [['--key', keyB, '--out', out], /holds key sha256:\w+, but .*: give that key's file with --key PEM/],
    [['--key', keyB], /holds key sha256:\w+, but /],
  ] as const) {
    const r = await run(['log', 'export', '--db', a.db, ...argv]);
    assert.equal(r.code, 1, `${argv.join(' ')}: ${r.err}`);
    assert.equal(r.out, '', 'no line of the log on stdout');
    assert.match(r.err, /^error: domain_conflict: /);
    assert.match(r.err, where);
    assert.doesNotMatch(r.err, /exported|signed by/);
    assert.deepEqual(readdirSync(a.dir).sort(), before, 'no FILE, no .partial');
  }
  // The domain's own key still signs.
  const ok = await run(['log', 'export', '--db', a.db, '--key', saved, '--out', out]);
  assert.equal(ok.code, 0, ok.err);
  assert.match(ok.err, /checkpoint signed by sha256:/);
});

test('report --out into a missing folder or onto a folder: refused, nothing left behind', async (t) => {
  const { dir, db } = await store(t);
  const before = readdirSync(dir).sort();
  refused(
    await run(['report', '--db', db, '--out', join(dir, 'nonexistent', 'x')]),
    /^error: usage: cannot write .*x: no folder .*nonexistent\n$/,
    'missing folder',
  );
  refused(
    await run(['report', '--db', db, '--out', dir]),
    /^error: usage: cannot write .*: it is a folder\n$/,
    'onto a folder',
  );
  assert.deepEqual(readdirSync(dir).sort(), before);
  const out = join(dir, 'r.json');
  const ok = await run(['report', '--db', db, '--out', out]);
  assert.equal(ok.code, 0, ok.err);
  assert.match(ok.out, /^wrote .*r\.json: /);
  assert.ok(JSON.parse(readFileSync(out, 'utf8')));
  assert.deepEqual(readdirSync(dir).sort(), [...before, 'r.json'].sort(), 'no .partial left');
});

test('report --out and log export --out replace an existing FILE whole, as their usage says', async (t) => {
  const { dir, db } = await store(t);
  for (const [argv, usage] of [
    [['report', '--db', db], 'report'],
    [['log', 'export', '--db', db], 'log'],
  ] as const) {
    const file = join(dir, `${usage}.out`);
    writeFileSync(file, 'an earlier run\n');
    const r = await run([...argv, '--out', file]);
    assert.equal(r.code, 0, `${usage}: ${r.err}`);
    assert.doesNotMatch(readFileSync(file, 'utf8'), /an earlier run/, usage);
    assert.ok(!readdirSync(dir).includes(`${usage}.out.partial`), `${usage}: no .partial left`);
    assert.match((await run([usage, '--help'])).out, /an existing\s+FILE is replaced/, `${usage} --help`);
  }
});

test('conformance --out naming a regular file: refused before any case runs, the file untouched', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'report.txt');
  writeFileSync(file, 'keep me');
  const started = Date.now();
  const r = await run(['conformance', '--case', 'AOC-CASE-001', '--out', file]);
  refused(r, /^error: usage: cannot write .*report\.txt: it is a file, not a folder\n$/, 'a file');
  assert.equal(readFileSync(file, 'utf8'), 'keep me');
  assert.ok(Date.now() - started < 5000, 'no case ran');
  const under = await run(['conformance', '--case', 'AOC-CASE-001', '--out', join(file, 'sub')]);
  refused(under, /^error: usage: cannot write .*sub: .*report\.txt is not a folder\n$/, 'under a file');
});

test('conformance --out /proc/nope (a folder the OS will not make, even for root): refused before any case runs, the process ends', async () => {
  // access(2) says yes to root for /proc, and Node 20's recursive mkdir loops on its ENOENT: the
  // check makes the folder for real, one level at a time, so this is refused up front.
  const baton = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
  const child = spawnWatched('baton conformance --out /proc/nope', process.execPath, [
    baton,
    'conformance',
    '--out',
    '/proc/nope/report',
  ]);
  const exit = await child.waitForExit();
  assert.equal(exit.code, 2, child.stderr());
  assert.match(
    child.stderr(),
    /^error: usage: cannot write \/proc\/nope\/report: .*\((ENOENT|EACCES|EPERM)\)$/m,
  );
  assert.deepEqual(child.lines, [], 'no header, no case line: nothing ran');
});

test('lease keygen --out an existing file, or a folder holding a key: refused, nothing overwritten', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'keyfile');
  writeFileSync(file, 'not a folder');
  const r = await run(['lease', 'keygen', '--out', file]);
  refused(r, /^error: usage: cannot write keys into .*keyfile: it is a file, not a folder/, 'a file');
  assert.match(r.err, /existing keys are never overwritten/);
  assert.equal(readFileSync(file, 'utf8'), 'not a folder');

  const keys = join(dir, 'keys');
  mkdirSync(keys);
  writeFileSync(join(keys, 'public.pem'), 'an existing public key');
  const half = await run(['lease', 'keygen', '--out', keys]);
  refused(half, /^error: usage: cannot write keys into .*public\.pem exists already/, 'a key inside');
  assert.deepEqual(readdirSync(keys), ['public.pem'], 'no private key written beside it');
  assert.equal(readFileSync(join(keys, 'public.pem'), 'utf8'), 'an existing public key');

  const under = await run(['lease', 'keygen', '--out', join(file, 'sub')]);
  refused(under, /^error: usage: cannot write .*sub: .*keyfile is not a folder\n$/, 'under a file');
});

test('writeOutputFile / writeThroughPartial: a failed write is usage naming the file, no .partial left', async (t) => {
  const dir = tempDir(t);
  const target = join(dir, 'report.json');
  mkdirSync(target);
  assert.throws(
    () => writeOutputFile(target, '{}'),
    (e: unknown) =>
      isBatonError(e, 'usage') && /^cannot write .*report\.json: it is a folder/.test(e.message),
  );
  await assert.rejects(
    writeThroughPartial(target, (write) => write('x')),
    (e: unknown) => isBatonError(e, 'usage') && /^cannot write .*report\.json: /.test(e.message),
  );
  await assert.rejects(
    writeThroughPartial(join(dir, 'missing', 'x'), (write) => write('x')),
    (e: unknown) => isBatonError(e, 'usage') && /no such file or folder \(ENOENT\)/.test(e.message),
  );
  const boom = new Error('the body failed');
  await assert.rejects(
    writeThroughPartial(join(dir, 'y'), () => Promise.reject(boom)),
    (e: unknown) => e === boom,
    "the body's own error passes through",
  );
  assert.deepEqual(readdirSync(dir), ['report.json']);
});

test('a FILE.partial already there is refused, never truncated or reused: FILE gets the mode asked for', (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'tokens.json');
  const stale = `${file}.partial`;
  writeFileSync(stale, 'another run is writing this', { mode: 0o644 });
  assert.throws(
    () => writeOutputFile(file, 'secret', 0o600),
    (e: unknown) =>
      isBatonError(e, 'usage') &&
      e.message.includes(`${stale} exists already (another run is writing ${file}, or one was killed`),
  );
  assert.equal(readFileSync(stale, 'utf8'), 'another run is writing this', 'the other run’s file untouched');
  assert.deepEqual(readdirSync(dir), ['tokens.json.partial'], 'FILE not written');
  rmSync(stale);
  writeOutputFile(file, 'secret', 0o600);
  assert.equal(statSync(file).mode & 0o777, 0o600);
});

test('lease keygen: an existing private.pem is refused and left byte for byte; no public key written beside it', async (t) => {
  const keys = join(tempDir(t), 'keys');
  mkdirSync(keys);
  const existing = Buffer.from(
    '-----BEGIN PRIVATE KEY-----\nsomeone else’s key\n-----END PRIVATE KEY-----\n',
  );
  writeFileSync(join(keys, 'private.pem'), existing, { mode: 0o600 });
  const r = await run(['lease', 'keygen', '--out', keys]);
  refused(
    r,
    /private\.pem exists already \(existing keys are never overwritten\)/,
    'an existing private key',
  );
  assert.deepEqual(readFileSync(join(keys, 'private.pem')), existing);
  assert.deepEqual(readdirSync(keys), ['private.pem'], 'no public key, no .partial');
});

test('lease keygen writes each key whole: under a file size limit it is refused (exit 2) and leaves no truncated private.pem', async (t) => {
  const keys = join(tempDir(t), 'keys');
  const baton = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
  // `ulimit -f 0`: every write to a regular file fails (EFBIG; Node ignores SIGXFSZ), after the
  // file was created: a key written in place would be left empty under its final name.
  const limited = spawnWatched('baton lease keygen (ulimit -f 0)', '/bin/sh', [
    '-c',
    'ulimit -f 0 && exec "$0" "$@"',
    process.execPath,
    baton,
    'lease',
    'keygen',
    '--out',
    keys,
  ]);
  const exit = await limited.waitForExit();
  assert.equal(exit.code, 2, limited.stderr());
  assert.match(
    limited.stderr(),
    /^error: usage: cannot write .*private\.pem: the file is too large .*\(EFBIG\)/m,
  );
  assert.deepEqual(readdirSync(keys), [], 'no private.pem, truncated or not, and no .partial');
  const again = await run(['lease', 'keygen', '--out', keys]);
  assert.equal(again.code, 0, `a rerun is not refused by a half-written key: ${again.err}`);
  assert.equal(statSync(join(keys, 'private.pem')).mode & 0o777, 0o600);
  assert.match(readFileSync(join(keys, 'private.pem'), 'utf8'), /^-----BEGIN PRIVATE KEY-----\n/);
  assert.deepEqual(readdirSync(keys).sort(), ['private.pem', 'public.pem']);
});

test('writeNewOutputFile: FILE appears whole with the mode asked for, and an existing FILE is never replaced', (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'private.pem');
  writeNewOutputFile(file, 'secret', 0o600);
  assert.equal(readFileSync(file, 'utf8'), 'secret');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.throws(
    () => writeNewOutputFile(file, 'another secret', 0o600),
    (e: unknown) => isBatonError(e, 'usage') && /private\.pem: it exists already \(EEXIST\)$/.test(e.message),
  );
  assert.equal(readFileSync(file, 'utf8'), 'secret', 'left as it was');
  assert.deepEqual(readdirSync(dir), ['private.pem'], 'no .partial left');
});
