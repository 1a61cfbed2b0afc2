/**
 * `baton missions verify-status` and `verify-set` (exit 0 valid, 1 refused with code and check, 2
 * usage) over answers fetched from the real reference issuer and its JWKS file; and `baton issuer`
 * printing its development-only label and admin token.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { main } from '../../src/cli/baton.js';
import { runIssuer } from '../../src/cli/commands/issuer.js';
import type { CliIo } from '../../src/cli/io.js';
import { signClaims, setClaims } from '../../src/issuer/sign.js';
import { AUDIENCE, CLIENT_ID, startWorld, type World } from './issuer-support.js';

let world: World;
let dir: string;
let jwksFile: string;
let mission: string;

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

before(async () => {
  world = await startWorld();
  mission = await world.createMission();
  dir = mkdtempSync(join(tmpdir(), 'baton-msn-cli-'));
  jwksFile = join(dir, 'jwks.json');
  writeFileSync(jwksFile, JSON.stringify(world.issuer.state.keys.jwks()));
});
after(async () => {
  await world.close();
  rmSync(dir, { recursive: true, force: true });
});

async function statusFile(): Promise<{ file: string; nonce: string }> {
  const result = await world.client.check(mission);
  assert.equal(result.kind, 'verified');
  const status = (result as { status: { jws: string } }).status;
  const payload = JSON.parse(Buffer.from(status.jws.split('.')[1]!, 'base64url').toString()) as {
    nonce: string;
  };
  const file = join(dir, `status-${payload.nonce}.jwt`);
  writeFileSync(file, `${status.jws}\n`);
  return { file, nonce: payload.nonce };
}

const verifyArgs = (file: string, nonce: string) => [
  'missions',
  'verify-status',
  file,
  '--jwks',
  jwksFile,
  '--iss',
  world.pin.issuer,
  '--aud',
  AUDIENCE,
  '--sub',
  CLIENT_ID,
  // `--nonce=`: a base64url nonce may start with '-', which as a separate argument reads as an option.
  `--nonce=${nonce}`,
  '--mission',
  mission,
];

test('MST-04: verify-status exits 0 and reports reliance for a fresh active answer (--json)', async () => {
  const { file, nonce } = await statusFile();
  const io = captureIo();
  assert.equal(await main([...verifyArgs(file, nonce), '--json'], io), 0, io.err);
  const out = JSON.parse(io.out) as {
    valid: boolean;
    status: { state: string; missionId: string };
    reliance: { relied: boolean };
  };
  assert.deepEqual(
    [out.valid, out.status.state, out.status.missionId, out.reliance.relied],
    [true, 'active', mission, true],
  );
});

test('MST-04: verify-status exits 1 naming the check for a wrong nonce, a wrong sub, a later --now', async () => {
  const { file, nonce } = await statusFile();
  const cases: Array<[string[], string]> = [
    [verifyArgs(file, 'other-nonce'), 'check=nonce'],
    [verifyArgs(file, nonce).map((a) => (a === CLIENT_ID ? 'someone-else' : a)), 'check=sub'],
    [[...verifyArgs(file, nonce), '--now', String(Math.floor(Date.now() / 1000) + 3600)], 'check=exp'],
  ];
  for (const [argv, want] of cases) {
    const io = captureIo();
    assert.equal(await main(argv, io), 1);
    assert.match(io.out, new RegExp(`^refused: mission_status_invalid .*${want}`));
  }
});

test('verify-status exits 2 on usage errors and an unreadable JWKS', async () => {
  const { file, nonce } = await statusFile();
  assert.equal(await main(['missions', 'verify-status', file, '--iss', world.pin.issuer], captureIo()), 2);
  assert.equal(
    await main(
      verifyArgs(file, nonce).map((a) => (a === jwksFile ? join(dir, 'missing.json') : a)),
      captureIo(),
    ),
    2,
  );
  assert.equal(await main(['missions', 'nope'], captureIo()), 2);
});

test('MSG-01: verify-set exits 0 for an issuer SET and 1 with the RFC 8935 code for another audience', async () => {
  const m = world.issuer.state.missions.get(mission)!;
  const input = {
    origin: world.pin.issuer,
    audience: AUDIENCE,
    mission: m,
    transition: m.history[0]!,
    nowMs: Date.now(),
    lifetimeSec: 300,
  };
  const good = join(dir, 'good.set');
  writeFileSync(
    good,
    await signClaims(setClaims(input, undefined), world.issuer.state.keys.current, 'secevent+jwt', undefined),
  );
  const io = captureIo();
  assert.equal(
    await main(
      ['missions', 'verify-set', good, '--jwks', jwksFile, '--iss', world.pin.issuer, '--aud', AUDIENCE],
      io,
    ),
    0,
    io.err,
  );
  assert.match(io.out, /^valid: mission .* \(approval\) -> active version 1/);
  const wrong = captureIo();
  assert.equal(
    await main(
      [
        'missions',
        'verify-set',
        good,
        '--jwks',
        jwksFile,
        '--iss',
        world.pin.issuer,
        '--aud',
        'https://other.example',
        '--json',
      ],
      wrong,
    ),
    1,
  );
  assert.deepEqual(JSON.parse(wrong.out), {
    valid: false,
    code: 'mission_signal_invalid',
    check: 'aud',
    err: 'invalid_audience',
  });
});

test('baton issuer prints its development-only label, its origin and a fresh admin token, and stops', async () => {
  const io = captureIo();
  const stop = new AbortController();
  const running = runIssuer(['--port', '0'], io, stop.signal);
  const deadline = Date.now() + 10_000;
  while (!io.out.includes('admin token') && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 10));
  stop.abort();
  assert.equal(await running, 0);
  assert.match(io.out, /development and tests only/);
  assert.match(io.out, /issuer http:\/\/127\.0\.0\.1:\d+ listening/);
  assert.match(io.out, /admin token \(shown once\): [A-Za-z0-9_-]{32}/);
});
