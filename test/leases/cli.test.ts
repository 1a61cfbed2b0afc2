import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runLease } from '../../src/cli/commands/lease.js';
import { runSor } from '../../src/cli/commands/sor.js';
import type { CliIo } from '../../src/cli/io.js';
import { sha256HexTag, sha256HexTagJcs } from '../../src/core/digest.js';
import { encodeLeaseHeader, parseFenceToken, type Lease } from '../../src/leases/index.js';
import { DRAFT_LEASE_MEMBERS } from './example.js';
import { waitUntil } from '../support/wait.js';

function io(stdin = ''): CliIo & { out: string; err: string } {
  const sink = {
    out: '',
    err: '',
    stdout: (s: string) => void (sink.out += s),
    stderr: (s: string) => void (sink.err += s),
    readStdin: () => Promise.resolve(Buffer.from(stdin)),
  };
  return sink;
}

async function run(argv: string[], stdin = ''): Promise<{ code: number; out: string; err: string }> {
  const sink = io(stdin);
  const code = await runLease(argv, sink);
  return { code, out: sink.out, err: sink.err };
}

const INVERSE = { op: 'release', quantity: 3 };
const STATE = { allocation_id: '99281', allocated: 12 };

function draft(issuedAt: string): Record<string, unknown> {
  return {
    ...DRAFT_LEASE_MEMBERS,
    pre_image_state_hash: sha256HexTagJcs(STATE),
    inverse_payload_jcs_hash: sha256HexTagJcs(INVERSE),
    trace_anchor_ref: sha256HexTag('trace'),
    issued_at: issuedAt,
    expires_at: new Date(Date.parse(issuedAt) + 30_000).toISOString(),
  };
}

test('baton lease keygen, sign and verify: valid, each refusal code with exit 1, usage errors exit 2', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-lease-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const keys = join(dir, 'keys');
  const gen = await run(['keygen', '--out', keys]);
  assert.equal(gen.code, 0);
  assert.match(gen.out, /^sha256:[0-9a-f]{64}\n$/);
  assert.equal(statSync(join(keys, 'private.pem')).mode & 0o777, 0o600);
  assert.equal((await run(['keygen', '--out', keys])).code, 2, 'never overwrites keys');
  const other = join(dir, 'other');
  assert.equal((await run(['keygen', '--out', other])).code, 0);

  const issuedAt = '2026-11-29T18:00:00.000Z';
  const draftFile = join(dir, 'draft.json');
  writeFileSync(draftFile, JSON.stringify(draft(issuedAt)));
  const signed = await run(['sign', '--key', join(keys, 'private.pem'), draftFile]);
  assert.equal(signed.code, 0, signed.err);
  const lease = JSON.parse(signed.out) as Lease;
  assert.equal(lease.signature.kid, gen.out.trim());
  const fromStdin = await run(
    ['sign', '--key', join(keys, 'private.pem'), '-'],
    JSON.stringify(draft(issuedAt)),
  );
  assert.deepEqual(JSON.parse(fromStdin.out), lease, 'Ed25519 is deterministic: same lease from stdin');
  const leaseFile = join(dir, 'lease.json');
  writeFileSync(leaseFile, signed.out);
  const inverseFile = join(dir, 'inverse.json');
  writeFileSync(inverseFile, JSON.stringify(INVERSE));
  const wrongInverse = join(dir, 'wrong-inverse.json');
  writeFileSync(wrongInverse, JSON.stringify({ ...INVERSE, quantity: 4 }));
  const tampered = join(dir, 'tampered.json');
  writeFileSync(tampered, signed.out.replace('"t_req_ms": 450', '"t_req_ms": 451'));

  const pub = join(keys, 'public.pem');
  const at = ['--now', '2026-11-29T18:00:10Z'];
  const rows: Array<[string[], number, string]> = [
    [['--key', pub, ...at, leaseFile], 0, 'valid'],
    [
      [
        '--key',
        pub,
        ...at,
        '--epoch',
        '1048578',
        '--state-digest',
        sha256HexTagJcs(STATE),
        '--inverse-payload',
        inverseFile,
        leaseFile,
      ],
      0,
      'valid',
    ],
    [['--key', pub, ...at, '--target', lease.sor_target_uri, leaseFile], 0, 'valid'],
    [['--key', pub, '--now', '2026-11-29T18:00:30.001Z', leaseFile], 1, 'ERR_LEASE_EXPIRED'],
    [['--key', pub, '--now', '2026-11-29T17:58:59.999Z', leaseFile], 1, 'ERR_CLOCK_SKEW'],
    [['--key', pub, ...at, '--epoch', '1048579', leaseFile], 1, 'ERR_STALE_FENCE_EPOCH'],
    [['--key', pub, ...at, '--state-digest', sha256HexTag('other'), leaseFile], 1, 'ERR_PRE_IMAGE_MISMATCH'],
    [['--key', pub, ...at, '--inverse-payload', wrongInverse, leaseFile], 1, 'ERR_INVERSE_PAYLOAD_MISMATCH'],
    [['--key', pub, ...at, '--target', 'https://erp.example.com/other', leaseFile], 1, 'ERR_TARGET_MISMATCH'],
    [['--key', join(other, 'public.pem'), ...at, leaseFile], 1, 'ERR_LEASE_SIGNATURE'],
    [['--key', pub, ...at, tampered], 1, 'ERR_LEASE_SIGNATURE'],
    [['--key', pub, ...at, draftFile], 1, 'ERR_LEASE_MALFORMED'],
  ];
  for (const [args, code, out] of rows) {
    const r = await run(['verify', ...args]);
    assert.deepEqual([r.code, r.out.trim()], [code, out], args.join(' '));
  }
  const stdinVerify = await run(['verify', '--key', pub, ...at], readFileSync(leaseFile, 'utf8'));
  assert.deepEqual([stdinVerify.code, stdinVerify.out], [0, 'valid\n']);
  // `valid` against the facts given: the rules it had none for are named, never silently passed.
  assert.equal(
    stdinVerify.err,
    "not checked: target (no --target), inverse_payload (no --inverse-payload), replay (the system of record's consumed leases), fence_epoch (no --epoch), pre_image (no --state-digest)\n",
  );
  const usage: string[][] = [
    ['verify', leaseFile],
    ['verify', '--key', pub, '--now', 'yesterday', leaseFile],
    ['verify', '--key', pub, '--epoch', '-1', leaseFile],
    ['verify', '--key', join(keys, 'private.pem'), leaseFile],
    ['sign', '--key', join(keys, 'private.pem'), leaseFile, draftFile],
    ['sign', '--key', pub, draftFile],
    ['frobnicate'],
  ];
  for (const args of usage) assert.equal((await run(args)).code, 2, args.join(' '));
  const missing = draft(issuedAt);
  delete missing['trace_anchor_ref'];
  const refused = await run(['sign', '--key', join(keys, 'private.pem'), '-'], JSON.stringify(missing));
  assert.deepEqual([refused.code, refused.out], [2, '']);
  assert.match(refused.err, /ERR_LEASE_MALFORMED/);
  t.diagnostic(`checked ${rows.length + usage.length + 2} invocations`);
});

// docs/leases.md §2: Baton never signs what it would refuse on its face. Before, only the shape was
// checked: mode YOLO with t_req_ms 99999 > t_granted_ms 1 signed (exit 0) and verify refused it.
test('baton lease sign refuses (exit 2, nothing printed) a lease the verifier refuses on its face', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-lease-sign-face-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const keys = join(dir, 'keys');
  assert.equal((await run(['keygen', '--out', keys])).code, 0);
  const issuedAt = '2026-11-29T18:00:00.000Z';
  const priv = join(keys, 'private.pem');
  const last = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
  const cases: Array<[string, Record<string, unknown>, string]> = [
    [
      'mode YOLO, t_req_ms > t_granted_ms',
      { recovery_mode: 'YOLO', t_req_ms: 99999, t_granted_ms: 1 },
      'ERR_UNKNOWN_RECOVERY_MODE',
    ],
    ['t_req_ms > t_granted_ms', { t_req_ms: 99999, t_granted_ms: 1 }, 'ERR_RECOVERY_WINDOW'],
    ['t_granted_ms 2^53 - 1', { t_granted_ms: Number.MAX_SAFE_INTEGER }, 'ERR_RECOVERY_WINDOW'],
    [
      'window one ms past year 9999',
      { t_granted_ms: last - Date.parse(issuedAt) + 1 },
      'ERR_RECOVERY_WINDOW',
    ],
  ];
  for (const [name, over, code] of cases) {
    const r = await run(['sign', '--key', priv, '-'], JSON.stringify({ ...draft(issuedAt), ...over }));
    assert.deepEqual([r.code, r.out], [2, ''], name);
    assert.match(r.err, new RegExp(`^error: ${code}: `), name);
  }
  // The window may end exactly at the last instant: signed, and verified at issued_at.
  const edge = await run(
    ['sign', '--key', priv, '-'],
    JSON.stringify({ ...draft(issuedAt), t_granted_ms: last - Date.parse(issuedAt) }),
  );
  assert.equal(edge.code, 0, edge.err);
  const file = join(dir, 'edge.json');
  writeFileSync(file, edge.out);
  const verified = await run(['verify', '--key', join(keys, 'public.pem'), '--now', issuedAt, file]);
  assert.deepEqual([verified.code, verified.out], [0, 'valid\n']);
});

test('baton sor serves allocations, honours a lease signed by baton lease sign, stops on request', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-sor-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  await run(['keygen', '--out', dir]);
  writeFileSync(join(dir, 'token'), 'an-operator-token-of-some-length\n');
  let stop: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const sink = io();
  const args = ['--port', '0', '--db', join(dir, 'sor.db'), '--trust', join(dir, 'public.pem')];
  const exit = runSor([...args, '--operator-token-file', join(dir, 'token')], sink, stopped);
  await waitUntil('baton sor to listen', () => sink.out.includes('\n'), {
    running: exit,
    detail: () => `stdout: ${sink.out}\nstderr: ${sink.err}`,
  });
  const url = /listening on (\S+)/.exec(sink.out)?.[1] ?? '';
  try {
    const res = await fetch(`${url}/api/v2/inventory/allocations/99281`);
    const state = (await res.json()) as Record<string, unknown>;
    const epoch = parseFenceToken(res.headers.get('agent-fence-token'));
    const d = {
      ...draft(new Date().toISOString()),
      sor_target_uri: `${url}/api/v2/inventory/allocations/99281`,
      cas_fence_epoch: epoch + 1,
      pre_image_state_hash: sha256HexTagJcs(state),
    };
    const signed = await run(['sign', '--key', join(dir, 'private.pem'), '-'], JSON.stringify(d));
    const commit = await fetch(`${url}/api/v2/inventory/allocations/99281`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'agent-compensation-lease': encodeLeaseHeader(JSON.parse(signed.out) as Lease),
      },
      body: JSON.stringify({ operation: { op: 'allocate', quantity: 3 }, inverse_payload: INVERSE }),
    });
    assert.equal(commit.status, 200);
    assert.equal(commit.headers.get('agent-fence-token'), String(epoch + 1));
    assert.ok(commit.headers.get('agent-commit-receipt'));
  } finally {
    stop();
    assert.equal(await exit, 0);
  }
  assert.doesNotMatch(sink.out, /operator token/, 'a token from a file is never printed');
});
