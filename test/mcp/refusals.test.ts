/**
 * Why Baton refused a call reaches the agent and the operator (docs/mcp.md "What the agent sees"):
 * the tool error names Baton's code, its message and its details (the refused member's path); a
 * policy naming a provider profile version Baton has not registered is refused at gateway start
 * (exit 2, naming the tool, the profile and the registered versions), both ways a gateway reaches
 * Baton, before anything is taken over.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { main } from '../../src/cli/baton.js';
import type { CliIo } from '../../src/cli/io.js';
import { inProcessGateway, LINEAGE, makeWorld, payArgs, policyFor } from './world.js';

type BatonErrorMeta = { code: string; message: string; details?: Record<string, unknown> };
const error = (r: CallToolResult): BatonErrorMeta => r._meta?.['baton/error'] as BatonErrorMeta;
const text = (r: CallToolResult): string => (r.content[0] as { text: string }).text;

async function run(argv: string[]): Promise<{ code: number; err: string }> {
  let err = '';
  const io: CliIo = {
    stdout: () => undefined,
    stderr: (s) => void (err += s),
    readStdin: () => Promise.resolve(Buffer.alloc(0)),
  };
  return { code: await main(argv, io), err };
}

test('a refused call names Baton’s message and details, not only its code', async (t) => {
  const w = await makeWorld(t);
  const unregistered = policyFor({ id: w.provider.profile.id, version: '2026-01-01' });
  const { client } = await inProcessGateway(t, { ...w, policy: unregistered });
  const r = (await client.callTool({
    name: 'pay',
    arguments: payArgs('inv-unregistered'),
  })) as CallToolResult;
  assert.equal(error(r).code, 'profile_not_found');
  assert.match(error(r).message, /^Baton refused the call: no such provider profile version/);
  assert.match(
    text(r),
    /^baton: profile_not_found: Baton refused the call: no such provider profile version/,
  );

  const { client: other } = await inProcessGateway(t, w);
  const extra = { ...payArgs('inv-extra'), memo: 'not in the profile' };
  const bad = (await other.callTool({ name: 'pay', arguments: extra })) as CallToolResult;
  assert.equal(error(bad).code, 'input_invalid', text(bad));
  assert.match(error(bad).message, /memo/, 'the refused member is named');
  assert.equal(typeof error(bad).details?.['path'], 'string', JSON.stringify(error(bad)));
  assert.match(text(bad), /memo/);
  assert.equal(w.control.calls['pay'], undefined, 'nothing was sent upstream');
});

for (const at of ['--baton', '--db'] as const) {
  test(`baton mcp (${at}) refuses at start a policy whose profile version is not registered: exit 2, naming tool, profile and the versions that exist`, async (t) => {
    const w = await makeWorld(t);
    process.env['BATON_TOKEN'] = w.token;
    t.after(() => delete process.env['BATON_TOKEN']);
    const file = join(w.dir, 'unregistered.json');
    const { id, version } = w.provider.profile;
    writeFileSync(file, JSON.stringify(policyFor({ id, version: '2026-01-01' })));
    const where = at === '--baton' ? [at, w.batonUrl] : [at, w.store.path];
    const r = await run(['mcp', '--policy', file, ...where, '--upstream', w.upstreamUrl]);
    assert.equal(r.code, 2, r.err);
    const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    assert.match(
      r.err,
      new RegExp(
        `error: mcp_policy_invalid: tool pay: provider profile ${esc(id)}@2026-01-01 is not registered at Baton \\(registered versions of ${esc(id)}: ${esc(version)}\\)`,
      ),
    );
    await assert.rejects(w.store.service.getLineage(LINEAGE), 'no takeover: the lineage was never opened');
  });
}
