/**
 * `--upstream-stdio`: the upstream the gateway starts inherits the gateway's environment (its own
 * API key, base URL, proxy settings…) EXCEPT Baton's secrets: no `BATON_*` variable (the operator
 * token the gateway polices the upstream with, BATON_HMAC_SECRETS) and no variable the
 * `--credentials` document names (a status source's secret: an upstream holding it could forge the
 * authenticated reading that settles its own calls, AOC-REQ-009). docs/mcp.md "Where Baton runs".
 * A real gateway child process, a real stdio upstream that reports what it was given.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ReportedEnvironment } from './upstream-env.js';
import { childGateway, ENV_UPSTREAM_SCRIPT, makeWorld, type BatonAt } from './world.js';

const ASK = ['PAYMENTS_API_KEY', 'PAYMENTS_BASE_URL', 'BATON_TOKEN', 'STATUS_SOURCE_SECRET'];

async function reported(at: BatonAt, t: Parameters<typeof makeWorld>[0]): Promise<ReportedEnvironment> {
  const w = await makeWorld(t);
  const upstream = [
    '--upstream',
    `payments=${w.upstreamUrl}`,
    '--upstream-stdio',
    `env=${process.execPath} ${ENV_UPSTREAM_SCRIPT}`,
  ];
  const env = {
    PAYMENTS_API_KEY: 'pk_test_upstream_own_key',
    PAYMENTS_BASE_URL: 'https://payments.example/v1',
    BATON_EXTRA_SETTING: 'not for the upstream',
    STATUS_SOURCE_SECRET: 'status-source-secret-value',
  };
  const args: string[] = [];
  if (at === 'store') {
    const file = join(w.dir, 'credentials.json');
    const extra = { env: 'STATUS_SOURCE_SECRET', origins: ['https://payments.example'] };
    const doc = { format: 'baton.credentials/1', credentials: { extra } };
    writeFileSync(file, JSON.stringify(doc));
    args.push('--credentials', file);
  }
  const { client } = await childGateway(t, w, upstream, at, { args, env });
  const r = (await client.callTool({ name: 'environment', arguments: { ask: ASK } })) as CallToolResult;
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  return r.structuredContent as unknown as ReportedEnvironment;
}

test('--upstream-stdio (--baton): the upstream gets the gateway’s environment, never a BATON_* variable (the operator token)', async (t) => {
  const seen = await reported('http', t);
  assert.equal(seen.values['PAYMENTS_API_KEY'], 'pk_test_upstream_own_key', 'its own API key reaches it');
  assert.equal(seen.values['PAYMENTS_BASE_URL'], 'https://payments.example/v1');
  assert.equal(seen.values['BATON_TOKEN'], null, 'the operator token never reaches the upstream');
  assert.deepEqual(
    seen.names.filter((n) => n.startsWith('BATON_')),
    [],
    'no BATON_* variable at all',
  );
});

test('--upstream-stdio (--db): neither BATON_HMAC_SECRETS nor a variable the --credentials document names reaches the upstream', async (t) => {
  const seen = await reported('store', t);
  assert.equal(seen.values['PAYMENTS_API_KEY'], 'pk_test_upstream_own_key');
  assert.equal(seen.values['STATUS_SOURCE_SECRET'], null, 'a status source’s secret is withheld');
  assert.deepEqual(
    seen.names.filter((n) => n.startsWith('BATON_')),
    [],
  );
});
