/**
 * The HTTP surface itself: problem+json for every kind of refusal, core's strict JSON on bodies
 * (a duplicate member is a 400, never a silently chosen value), content types, size limits,
 * schema validation that refuses instead of repairing, and logs that never hold a secret.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { BatonError } from '../../src/core/errors.js';
import type { JsonObject } from '../../src/core/json.js';
import { toBatonError, toProblem } from '../../src/server/problem.js';
import {
  assertProblem,
  createBody,
  domainConfig,
  setupOverHttp,
  startApi,
  str,
  takeover,
} from './helpers.js';

test('bodies are parsed strictly: each malformed body is refused with its json_* code and no state change', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  const cred = await takeover(api, 'strict');
  const cases: [string | Uint8Array, number, string][] = [
    ['{"id":"a","id":"b","limits":{},"bypassPaths":[]}', 400, 'json_duplicate_member'],
    ['{"id":"a","\\u0069d":"b"}', 400, 'json_duplicate_member'],
    ['{"id":"a",}', 400, 'json_malformed'],
    ['{"id":"a"} {}', 400, 'json_malformed'],
    ['{"id":"\\ud800"}', 400, 'json_lone_surrogate'],
    [Uint8Array.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), 400, 'json_invalid_encoding'],
  ];
  let n = 0;
  for (const [raw, status, code] of cases) {
    for (const [method, path, token] of [
      ['PUT', '/v1/domain', api.admin],
      ['POST', '/v1/occurrences', cred],
    ] as const) {
      const before = await api.snapshot();
      const a = await api.call(method, path, { token, raw });
      assertProblem(a, status, code);
      assert.equal(await api.snapshot(), before);
      n += 1;
    }
  }
  // A duplicate hidden deep inside the provider request is refused too, not resolved to one value.
  const body = JSON.stringify(createBody('dup')).replace(
    '"currency":"EUR"',
    '"currency":"EUR","currency":"USD"',
  );
  assertProblem(
    await api.call('POST', '/v1/occurrences', { token: cred, raw: body }),
    400,
    'json_duplicate_member',
  );
  assert.equal((await api.service.counts()).total, 0);
  t.diagnostic(`checked ${n + 1} cases`);
});

test('schema validation refuses unknown members, wrong types and missing members (input_invalid)', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  const cred = await takeover(api, 'schema');
  const bad = [
    { ...createBody('x'), credential: cred },
    { ...createBody('x'), extra: 1 },
    { ...createBody('x'), authority: { id: 'payouts', amount: '1000' } },
    { ...createBody('x'), creationKey: undefined },
    { ...createBody('x'), linkedIds: [{ type: 'provider_key', value: 'forged' }] },
  ];
  for (const body of bad) {
    const before = await api.snapshot();
    assertProblem(await api.call('POST', '/v1/occurrences', { token: cred, body }), 400, 'input_invalid');
    assert.equal(await api.snapshot(), before);
  }
  const named = await api.call('POST', '/v1/occurrences', {
    token: cred,
    body: { ...createBody('x'), extra: 1 },
  });
  assert.equal(named.body['detail'], 'body: member "extra" is not allowed');
  const typed = await api.call('POST', '/v1/occurrences', {
    token: cred,
    body: { ...createBody('x'), authority: { id: 'payouts', amount: 'SECRET-VALUE' } },
  });
  assert.match(str(typed.body, 'detail'), /^body\/authority\/amount: must be integer$/);
  assert.ok(!typed.text.includes('SECRET-VALUE'), 'a refusal never echoes the value');
  const tooMany = { ...domainConfig(), limits: { ...(domainConfig()['limits'] as object), extra: 1 } };
  assertProblem(
    await api.call('PUT', '/v1/domain', { token: api.admin, body: tooMany }),
    400,
    'input_invalid',
  );
  t.diagnostic(`checked ${bad.length + 1} cases`);
});

test('content types, size limit, unknown routes and the problem+json shape', async (t) => {
  const api = await startApi(t);
  const tok = { token: api.admin };
  const plain = await api.call('PUT', '/v1/domain', { ...tok, raw: 'id=a', contentType: 'text/plain' });
  assertProblem(plain, 415, 'media_type_unsupported');
  const form = await api.call('PUT', '/v1/domain', {
    ...tok,
    raw: 'id=a',
    contentType: 'application/x-www-form-urlencoded',
  });
  assertProblem(form, 415, 'media_type_unsupported');
  const big = `{"id":"${'a'.repeat(1_100_000)}"}`;
  assertProblem(await api.call('PUT', '/v1/domain', { ...tok, raw: big }), 413, 'json_too_large');
  const missing = await api.call('GET', '/v1/nothing-here', tok);
  assertProblem(missing, 404, 'not_found');
  const p = (await api.call('GET', '/v1/domain', tok)).body;
  assert.deepEqual(Object.keys(p).sort(), ['code', 'detail', 'retryable', 'status', 'title', 'type']);
  assert.equal(p['code'], 'domain_not_found');
  assert.equal(p['title'], 'Domain not found');
  const invalid = (await api.call('PUT', '/v1/domain', { ...tok, body: { id: 'x' } })).body;
  assert.equal(typeof invalid['details'], 'object', 'non-secret details travel as an extension member');
});

test('a store failure is a 5xx problem whose detail leaks nothing', async (t) => {
  const api = await startApi(t);
  await api.engine.close();
  const a = await api.call('GET', '/v1/counts', { token: api.admin });
  assertProblem(a, 503, 'unavailable');
  assert.equal(a.body['retryable'], true);
  assertProblem(await api.call('GET', '/readyz'), 503, 'unavailable');
  const metrics = await api.call('GET', '/metrics');
  assert.match(metrics.text, /^baton_store_up 0$/m, 'a scrape still answers, saying the store is down');
  // Anything that is not a BatonError becomes `internal` with a fixed detail: no message, stack or SQL.
  const leaked = toProblem(toBatonError(new Error('SELECT secret_digest FROM api_tokens')));
  assert.deepEqual(
    { code: leaked.code, status: leaked.status, detail: leaked.detail },
    { code: 'internal', status: 500, detail: 'internal error' },
  );
});

test('structured logs are JSON lines and never contain a bearer token or a token secret', async (t) => {
  const logs = new PassThrough();
  const lines: string[] = [];
  logs.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  const api = await startApi(t, { logs });
  await setupOverHttp(api);
  const cred = await takeover(api, 'logged');
  const made = await api.call('POST', '/v1/tokens', { token: api.admin, body: { role: 'operator' } });
  await api.call('GET', '/v1/domain', { token: 'btk.tok_' + 'a'.repeat(32) + '.' + 'b'.repeat(43) });
  await api.call('POST', '/v1/occurrences', { token: cred, body: createBody('logged-1') });
  await new Promise((resolve) => setImmediate(resolve));
  assert.ok(lines.length > 10, 'requests were logged');
  for (const line of lines) JSON.parse(line);
  const all = lines.join('\n');
  for (const secret of [api.admin, api.operator, cred, made.body['token'] as string]) {
    assert.ok(!all.includes(secret), 'a token appears in the logs');
    assert.ok(!all.includes(secret.slice(-43)), 'a token secret appears in the logs');
  }
  assert.match(all, /"code":"unauthenticated"/, 'refusals are logged with their code');
  t.diagnostic(`checked ${lines.length} log lines`);
});

test('a credential pasted into a URL path or query is not written to the log', async (t) => {
  const logs = new PassThrough();
  const lines: string[] = [];
  logs.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  const api = await startApi(t, { logs });
  await setupOverHttp(api);
  const cred = await takeover(api, 'pasted');
  // Pasted where an id belongs: a token (`btk.`), a console session (`bss.`), an executor credential.
  const session = 'bss.ses_' + 'c'.repeat(32) + '.' + 'd'.repeat(43);
  await api.call('DELETE', `/v1/tokens/${api.operator}`, { token: api.admin });
  await api.call('GET', `/v1/tokens/${encodeURIComponent(api.operator)}?again=${api.operator}`, {
    token: api.admin,
  });
  await api.call('GET', `/v1/lineages/${session}`, { token: api.admin });
  await api.call('GET', `/v1/lineages/${cred}?credential=${encodeURIComponent(cred)}`, { token: api.admin });
  await new Promise((resolve) => setImmediate(resolve));
  const all = lines.join('\n');
  assert.match(all, /"url":"\/v1\/tokens\/\[redacted\]"/, 'the request is logged, its credential redacted');
  for (const secret of [api.operator, session, cred]) {
    assert.ok(!all.includes(secret.slice(-43)), `a secret pasted into a URL appears in the logs`);
  }
  assert.ok(!all.includes(api.operator.slice(0, 40)), 'not even the token id part of the pasted token');
});

/** The server's JSON log lines, as they are written. */
function logLines(): { stream: PassThrough; lines: () => JsonObject[] } {
  const stream = new PassThrough();
  const raw: string[] = [];
  stream.on('data', (chunk: Buffer) => raw.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  return { stream, lines: () => raw.map((l) => JSON.parse(l) as JsonObject) };
}

test('log levels: a refusal is info, a store that does not answer a warning without a stack, a defect an error with its stack', async (t) => {
  const logs = logLines();
  let defect: Error | undefined;
  const api = await startApi(t, {
    logs: logs.stream,
    // A bug in Baton's own code, as a read meets it: not a BatonError.
    wrapEngine: (engine) => ({
      ...engine,
      kind: engine.kind,
      transaction: (fn) => engine.transaction(fn),
      read: (fn) => (defect !== undefined ? Promise.reject(defect) : engine.read(fn)),
      close: () => engine.close(),
    }),
  });
  await api.call('GET', '/v1/domain', { token: 'btk.tok_' + 'a'.repeat(32) + '.' + 'b'.repeat(43) });
  defect = new TypeError('x is not a function');
  assertProblem(await api.call('GET', '/v1/counts', { token: api.admin }), 500, 'internal');
  // Damage an operator must see is a 500 too, and logged as an error, not a warning.
  defect = new BatonError('store_corrupt', 'a stored profile no longer matches its pinned digest');
  assertProblem(await api.call('GET', '/v1/counts', { token: api.admin }), 500, 'store_corrupt');
  defect = undefined;
  await api.engine.close();
  assertProblem(await api.call('GET', '/v1/counts', { token: api.admin }), 503, 'unavailable');
  await new Promise((resolve) => setImmediate(resolve));
  const byCode = (code: string): JsonObject[] => logs.lines().filter((l) => l['code'] === code);
  const [refused] = byCode('unauthenticated');
  assert.equal(refused?.['level'], 30);
  assert.equal(refused?.['msg'], 'request refused');
  const [failed] = byCode('internal');
  assert.equal(failed?.['level'], 50);
  assert.match(JSON.stringify(failed?.['err']), /TypeError: x is not a function/, 'a defect keeps its stack');
  const [corrupt] = byCode('store_corrupt');
  assert.equal(corrupt?.['level'], 50);
  assert.equal(corrupt?.['msg'], 'request failed');
  const [unavailable] = byCode('unavailable');
  assert.equal(unavailable?.['level'], 40);
  assert.equal(unavailable?.['msg'], 'request not served');
  assert.equal(typeof unavailable?.['reason'], 'string');
  assert.equal(unavailable?.['err'], undefined, 'no stack for a dependency that did not answer');
});

test('a provider profile edited in the database behind Baton is store_corrupt, never served or used', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  // Someone with write access to the database points the pinned profile at their own account.
  await api.engine.transaction((tx) =>
    tx.run("UPDATE aoc_profiles SET document = replace(document, 'acct_', 'acct_attacker_')"),
  );
  const read = await api.call('GET', '/v1/profiles/sandbox-payments/2026-01-01', { token: api.operator });
  assertProblem(read, 500, 'store_corrupt');
  const cred = await takeover(api, 'tampered');
  const made = await api.call('POST', '/v1/occurrences', { token: cred, body: createBody('tampered-1') });
  assertProblem(made, 500, 'store_corrupt');
});
