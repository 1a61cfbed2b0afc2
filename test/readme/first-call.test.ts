/**
 * README "First guarded call", run VERBATIM: the fenced block is read from README.md (so drift
 * fails this test) and run with bash in a scratch copy of the clone (symlinks to dist, src,
 * node_modules, profiles; its own examples/ and database), on the README's fixed ports. Then the
 * curl example. Each must print `"status":"succeeded"` and the sandbox's effect ledger — the
 * oracle — must show exactly one effect for that payment's native key; a replay of the same
 * invoice (with either example) sends nothing and prints the original's status. Every process the block started is killed afterwards (its process group).
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { repoRoot } from '../support/paths.js';
import { createSandboxProvider } from '../../src/providers/sandbox/index.js';
import { bashGroup, portFree, readmeBlock, scratchClone, type Finished } from './support.js';

const SANDBOX = 'http://127.0.0.1:4010';
const ADMIN = 'readme-test-sandbox-admin-token';
const DEADLINE_MS = 240_000;

/** A scratch clone with the README's examples/ files. */
function workspace(t: TestContext): string {
  const dir = scratchClone(t, 'baton-readme-');
  for (const f of ['baton.config.json', 'first-call.ts', 'first-call.sh'])
    cpSync(join(repoRoot, 'examples', f), join(dir, 'examples', f));
  return dir;
}

function bash(t: TestContext, cwd: string, args: string[]): Promise<Finished> {
  return bashGroup(t, cwd, args, { BATON_SANDBOX_ADMIN_TOKEN: ADMIN }, DEADLINE_MS);
}

function lastJson(out: string): Record<string, unknown> {
  const line = out
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{"invoice"'))
    .pop();
  assert.ok(line !== undefined, `a result line in:\n${out}`);
  return JSON.parse(line) as Record<string, unknown>;
}

async function effectCount(nativeKey: string): Promise<number> {
  const r = await fetch(`${SANDBOX}/admin/effects/${encodeURIComponent(nativeKey)}`, {
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  assert.equal(r.status, 200);
  return ((await r.json()) as { count: number }).count;
}

test(
  'README "First guarded call": the block verbatim, then the curl example, each one payment and one effect',
  { timeout: DEADLINE_MS * 2 },
  async (t) => {
    for (const port of [4010, 4001]) assert.ok(await portFree(port), `port ${port} (the README's) is in use`);
    const dir = workspace(t);
    const block = readmeBlock(join(repoRoot, 'README.md'), 'First guarded call');
    assert.equal(block.trim().split('\n').length, 3, 'at most three commands');

    const run = await bash(t, dir, ['-c', block]);
    assert.equal(run.code, 0, `${run.out}\n${run.err}`);
    const sdk = lastJson(run.out);
    // Which Baton it used, said on stderr (a BATON_URL exported for a real server shows here).
    assert.match(
      run.err,
      /^first-call\.ts: Baton at http:\/\/127\.0\.0\.1:4001, sandbox at http:\/\/127\.0\.0\.1:4010$/m,
    );
    assert.equal(sdk['status'], 'succeeded');
    assert.deepEqual(
      [sdk['phase'], sdk['outcome'], sdk['effect'], sdk['adapterCalls']],
      ['resolved', 'success', 'occurred', 1],
    );
    assert.equal(await effectCount(String(sdk['nativeKey'])), 1, 'the sandbox applied exactly one effect');

    // The same invoice again: the creation binding returns the original; nothing is sent.
    const replay = await bash(t, dir, ['-c', `npx tsx examples/first-call.ts ${String(sdk['invoice'])}`]);
    assert.equal(replay.code, 0, replay.err);
    assert.deepEqual(
      [lastJson(replay.out)['adapterCalls'], lastJson(replay.out)['occurrenceId']],
      [0, sdk['occurrenceId']],
    );
    assert.equal(await effectCount(String(sdk['nativeKey'])), 1, 'still one effect');

    const curl = await bash(t, dir, ['examples/first-call.sh', 'inv-sh-1']);
    assert.equal(curl.code, 0, `${curl.out}\n${curl.err}`);
    const sh = lastJson(curl.out);
    assert.deepEqual(
      [sh['status'], sh['phase'], sh['effect'], sh['adapterCalls']],
      ['succeeded', 'resolved', 'occurred', 1],
    );
    assert.notEqual(sh['nativeKey'], sdk['nativeKey']);
    assert.equal(await effectCount(String(sh['nativeKey'])), 1);

    // The same invoice again, as first-call.ts: the original, resolved, and nothing sent twice.
    const again = await bash(t, dir, ['examples/first-call.sh', 'inv-sh-1']);
    assert.equal(again.code, 0, `${again.out}\n${again.err}`);
    const re = lastJson(again.out);
    assert.deepEqual(
      [re['status'], re['reason'], re['adapterCalls'], re['occurrenceId'], re['nativeKey']],
      ['succeeded', 'existing_resolved', 0, sh['occurrenceId'], sh['nativeKey']],
    );
    assert.equal(await effectCount(String(sh['nativeKey'])), 1, 'still one effect after the re-run');

    // A non-2xx answer inside $(…) prints its problem body on stderr (here: a token Baton never issued).
    mkdirSync(join(dir, 'bad'));
    cpSync(join(dir, 'examples', 'first-call.sh'), join(dir, 'bad', 'first-call.sh'));
    writeFileSync(
      join(dir, 'bad', 'first-call.tokens.json'),
      JSON.stringify({ tokens: [{ name: 'first-call-operator', token: 'not-a-token' }] }),
    );
    const refused = await bash(t, dir, ['bad/first-call.sh', 'inv-sh-2']);
    assert.notEqual(refused.code, 0);
    assert.match(
      refused.err,
      /first-call\.sh: GET http:\/\/127\.0\.0\.1:4001\/v1\/profiles answered 401: \{.*"code"/,
    );

    // A sandbox no registered version is pinned to (as after restarting `baton sandbox`: new keys):
    // both examples refuse before anything is created or sent, and say what to do; the newest
    // registered version is not taken for the running sandbox.
    const other = createSandboxProvider();
    const otherUrl = await other.listen(0, '127.0.0.1');
    t.after(() => other.close());
    for (const args of [
      ['-c', 'npx tsx examples/first-call.ts inv-stale-ts'],
      ['examples/first-call.sh', 'inv-stale-sh'],
    ]) {
      const stale = await bashGroup(
        t,
        dir,
        args,
        { BATON_SANDBOX_ADMIN_TOKEN: ADMIN, SANDBOX_URL: otherUrl },
        DEADLINE_MS,
      );
      assert.equal(stale.code, 1, `${args.join(' ')}: ${stale.out}\n${stale.err}`);
      assert.match(
        stale.err,
        /no sandbox-payments-ed25519 version registered at .* is pinned to the sandbox running at http:\/\/127\.0\.0\.1:\d+.*nothing was sent\. Restart `baton serve --config examples\/baton\.config\.json`/,
      );
      assert.doesNotMatch(stale.out, /"invoice"/, 'no result line: nothing was created');
    }
    assert.deepEqual(other.effects(), [], 'the other sandbox received no payment');

    // A payment the sandbox reports pending: both examples print it unresolved with the same
    // members, `reason: awaiting_status` (and Baton's missingKnowledge when it names one).
    const open: Record<string, unknown>[] = [];
    for (const args of [
      ['-c', 'npx tsx examples/first-call.ts inv-open-ts'],
      ['examples/first-call.sh', 'inv-open-sh'],
    ]) {
      const armed = await fetch(`${SANDBOX}/admin/faults`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ target: 'next', fault: 'status_changes_later:pending:20' }),
      });
      assert.equal(armed.status, 201, await armed.text());
      const r = await bash(t, dir, args);
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.out}\n${r.err}`);
      open.push(lastJson(r.out));
    }
    const [ts, sh2] = open as [Record<string, unknown>, Record<string, unknown>];
    assert.deepEqual([ts['status'], ts['reason'], ts['adapterCalls']], ['unresolved', 'awaiting_status', 1]);
    assert.deepEqual(
      [sh2['status'], sh2['reason'], sh2['adapterCalls']],
      ['unresolved', 'awaiting_status', 1],
    );
    // first-call.ts records the sandbox's answer, so Baton's missingKnowledge comes from it; the
    // script's reconcile answer carries one only when a status source names it.
    assert.equal(typeof ts['missingKnowledge'], 'string', 'first-call.ts prints missingKnowledge');
    const shared = Object.keys(ts).filter((k) => k !== 'missingKnowledge' || 'missingKnowledge' in sh2);
    assert.deepEqual(Object.keys(sh2), shared, 'the same members, in the same order');
  },
);
