/**
 * `baton mcp --postgres URL --domain-key FILE`: Baton's service inside the gateway on a real
 * PostgreSQL database (docs/mcp.md "Where Baton runs"), the domain configured by this process as
 * `baton serve`'s operator would. A consequential call is recorded in that database, settled by the
 * pinned status source the gateway asks itself, and its repeat is answered without a second effect.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { postgresForTests } from '../support/postgres.js';
import { postgresWorld } from './postgres-world.js';
import { LINEAGE, MAIN, payArgs, policyFor } from './world.js';

const pg = await postgresForTests();

type Meta = { id: string; effect: string; repeat: boolean; unresolved: boolean };
const meta = (r: CallToolResult): Meta => r._meta?.['baton/occurrence'] as Meta;

if (pg !== undefined) {
  test('--postgres: the gateway runs Baton on the database itself; recorded there, settled, a repeat is not sent again', async (t) => {
    const url = await pg.schema();
    const { dir, provider, service, control, upstream } = await postgresWorld(t, url, 'baton-mcp-pg-');
    const policyFile = join(dir, 'policy.json');
    writeFileSync(policyFile, JSON.stringify(policyFor(provider.profile)));
    const hmac = provider.sandbox.pins().find((p) => p.kind === 'hmac');
    if (hmac?.kind !== 'hmac') throw new Error('the test sandbox signs with HMAC');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        ...[MAIN, 'mcp', '--policy', policyFile, '--postgres', url],
        ...['--domain-key', join(dir, 'baton.domain-key.pem'), '--upstream', `payments=${upstream.url}`],
      ],
      env: {
        PATH: process.env['PATH'] ?? '',
        BATON_HMAC_SECRETS: `${hmac.secretId}=${Buffer.from(hmac.secret).toString('base64url')}`,
      },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(transport, { timeout: 20_000 });
    t.after(() => client.close());

    const r = (await client.callTool({ name: 'pay', arguments: payArgs('inv-pg') })) as CallToolResult;
    assert.notEqual(r.isError, true, JSON.stringify(r.content));
    assert.equal(meta(r).effect, 'occurred');
    assert.equal(meta(r).unresolved, false);
    const detail = await service.getOccurrence(meta(r).id);
    assert.equal(detail.occurrence.lineage, LINEAGE, 'recorded in this database');
    assert.equal(detail.occurrence.effect, 'occurred');
    const again = (await client.callTool({ name: 'pay', arguments: payArgs('inv-pg') })) as CallToolResult;
    assert.equal(meta(again).repeat, true);
    assert.equal(meta(again).id, meta(r).id);
    assert.equal(control.calls['pay'], 1, 'never sent again');
    assert.equal(provider.sandbox.effects().length, 1, 'one effect');
  });
}
