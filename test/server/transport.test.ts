/**
 * What the API takes at the HTTP level, on a real server on loopback (docs/api.md: "Headers
 * sent once", "Caching", "Errors"): a header that carries a credential or the body's type may be sent once only (two
 * Authorization headers, two Content-Type headers, two session cookies are `400 http_malformed`
 * before any authentication: a proxy keeping the other copy would act differently); a JSON body
 * declared in a charset other than UTF-8 is `415`; a route without a request body refuses one
 * (`400 input_invalid`) instead of ignoring it; every /v1 answer is `Cache-Control: no-store` and
 * `X-Content-Type-Options: nosniff`; and
 * no problem carries a framework's internal error code. Repeated headers go over raw sockets
 * (fetch merges them). After each refusal, nothing changed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import { assertProblem, setupOverHttp, startApi, str, type Api } from './helpers.js';
import { assertRawProblem, raw, type RawAnswer } from './raw-http.js';

const BOGUS = 'btk.tok_00000000000000000000000000000000.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

function send(
  api: Api,
  method: string,
  path: string,
  headers: readonly string[],
  body = '',
): Promise<RawAnswer> {
  const length = body === '' ? '' : `Content-Length: ${Buffer.byteLength(body)}\r\n`;
  const lines = headers.map((h) => `${h}\r\n`).join('');
  return raw(
    api.url,
    `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines}${length}Connection: close\r\n\r\n${body}`,
  );
}

function assertRepeated(a: RawAnswer, header: string, secrets: readonly string[]): void {
  assertRawProblem(a, 400, 'http_malformed');
  assert.equal((a.body['details'] as JsonObject | undefined)?.['header'], header, a.text);
  for (const s of secrets) assert.ok(!a.text.includes(s), 'the header is named, never its value');
}

async function tokenIds(api: Api): Promise<string[]> {
  const list = await api.call('GET', '/v1/tokens', { token: api.admin });
  assert.equal(list.status, 200, list.text);
  return (list.body['tokens'] as JsonObject[]).filter((t) => t['revokedAt'] === null).map((t) => str(t));
}

async function signIn(api: Api): Promise<{ cookie: string; csrf: string }> {
  const answer = await api.call('POST', '/v1/session', { body: { token: api.operator } });
  assert.equal(answer.status, 201, answer.text);
  const cookie = /^(baton_session=[^;]+)/.exec(answer.headers.get('set-cookie') ?? '')?.[1];
  assert.ok(cookie !== undefined);
  return { cookie, csrf: answer.body['csrfToken'] as string };
}

test('two Authorization headers are 400 http_malformed in either order, before authentication, and change nothing', async (t) => {
  const api = await startApi(t);
  const good = `Authorization: Bearer ${api.admin}`;
  const bad = `Authorization: Bearer ${BOGUS}`;
  assertRepeated(await send(api, 'GET', '/v1/counts', [good, bad]), 'authorization', [api.admin]);
  assertRepeated(await send(api, 'GET', '/v1/counts', [bad, good]), 'authorization', [api.admin]);
  // Even the same credential twice: one header, one credential.
  assertRepeated(await send(api, 'GET', '/v1/counts', [good, good]), 'authorization', [api.admin]);
  const before = await api.snapshot();
  const create = JSON.stringify({ role: 'operator', name: 'twice' });
  const json = 'Content-Type: application/json';
  assertRepeated(await send(api, 'POST', '/v1/tokens', [good, bad, json], create), 'authorization', []);
  // The executor routes read the bearer themselves (issue 16 §1): refused all the same.
  assertRepeated(
    await send(api, 'POST', '/v1/occurrences', [`Authorization: Bearer ${'A'.repeat(43)}`, bad, json], '{}'),
    'authorization',
    [],
  );
  // The webhook receiver authenticates by signature, but a repeated bearer is refused there too.
  assertRepeated(
    await send(api, 'POST', '/v1/webhooks/no-such-profile', [good, bad, json], '{}'),
    'authorization',
    [],
  );
  assert.equal(await api.snapshot(), before, 'no refused request changed any row');
  const metrics = await api.call('GET', '/metrics');
  assert.match(metrics.text, /code="http_malformed"/, 'the refusal is counted');
});

test('two Content-Type headers are 400 http_malformed and create nothing', async (t) => {
  const api = await startApi(t);
  const before = await tokenIds(api);
  const snapshot = await api.snapshot();
  const create = JSON.stringify({ role: 'operator', name: 'typed-twice' });
  const headers = [
    `Authorization: Bearer ${api.admin}`,
    'Content-Type: application/json',
    'Content-Type: text/plain',
  ];
  assertRepeated(await send(api, 'POST', '/v1/tokens', headers, create), 'content-type', []);
  const swapped = [headers[0] ?? '', headers[2] ?? '', headers[1] ?? ''];
  assertRepeated(await send(api, 'POST', '/v1/tokens', swapped, create), 'content-type', []);
  assert.deepEqual(await tokenIds(api), before, 'no token was created');
  assert.equal(await api.snapshot(), snapshot);
});

test('two session cookies (in one Cookie header or two) and two CSRF headers are 400 http_malformed; the session still works', async (t) => {
  const api = await startApi(t);
  const s = await signIn(api);
  const other =
    'baton_session=bss.ses_00000000000000000000000000000000.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
  const secret = s.cookie.split('.').at(-1) ?? '';
  assertRepeated(await send(api, 'GET', '/v1/counts', [`Cookie: ${s.cookie}; ${other}`]), 'cookie', [secret]);
  assertRepeated(await send(api, 'GET', '/v1/counts', [`Cookie: ${other}; ${s.cookie}`]), 'cookie', [secret]);
  assertRepeated(
    await send(api, 'GET', '/v1/counts', [`Cookie: ${s.cookie}`, `Cookie: ${other}`]),
    'cookie',
    [secret],
  );
  const before = await api.snapshot();
  const csrf = [`Cookie: ${s.cookie}`, `X-Baton-CSRF: ${s.csrf}`, `X-Baton-CSRF: ${s.csrf}`];
  assertRepeated(await send(api, 'DELETE', '/v1/session', csrf), 'x-baton-csrf', [s.csrf]);
  assert.equal(await api.snapshot(), before, 'the session was not ended');
  // One cookie (beside an unrelated one) still authenticates.
  const one = await send(api, 'GET', '/v1/session', [`Cookie: theme=dark; ${s.cookie}`]);
  assert.equal(one.status, 200, one.text);
});

test('a JSON body declared in a charset other than UTF-8 is 415 media_type_unsupported; utf-8 in any spelling is taken', async (t) => {
  const api = await startApi(t);
  const before = await tokenIds(api);
  const body = { role: 'operator', name: 'charset' };
  for (const type of [
    'application/json; charset=utf-16',
    'application/json; charset=latin1',
    'application/json;charset="ISO-8859-1"',
    'application/json; CHARSET=us-ascii',
    'application/json; charset=utf-8; charset=utf-16',
  ]) {
    const a = await api.call('POST', '/v1/tokens', {
      token: api.admin,
      raw: JSON.stringify(body),
      contentType: type,
    });
    assertProblem(a, 415, 'media_type_unsupported');
  }
  assert.deepEqual(await tokenIds(api), before, 'no token was created');
  for (const type of [
    'application/json; charset=utf-8',
    'application/json; Charset="UTF-8"',
    'application/json',
  ]) {
    const a = await api.call('POST', '/v1/tokens', {
      token: api.admin,
      raw: JSON.stringify(body),
      contentType: type,
    });
    assert.equal(a.status, 201, `${type}: ${a.text}`);
  }
});

test('a route without a request body refuses one (400 input_invalid) and changes nothing; no body or {} still works', async (t) => {
  const api = await startApi(t, { continuity: true });
  const made = await api.call('POST', '/v1/tokens', { token: api.admin, body: { role: 'operator' } });
  assert.equal(made.status, 201, made.text);
  const id = str(made.body);
  const before = await api.snapshot();
  const kept = await api.call('DELETE', `/v1/tokens/${id}`, { token: api.admin, body: { keep: true } });
  assertProblem(kept, 400, 'input_invalid');
  assert.match(str(kept.body, 'detail'), /member "keep" is not allowed/);
  assertProblem(
    await api.call('DELETE', `/v1/tokens/${id}`, { token: api.admin, body: [] }),
    400,
    'input_invalid',
  );
  const unpin = '/v1/continuity/producers?producer=urn:x';
  assertProblem(
    await api.call('DELETE', unpin, { token: api.admin, body: { keep: true } }),
    400,
    'input_invalid',
  );
  assert.equal(await api.snapshot(), before, 'the token is not revoked');
  const s = await signIn(api);
  const after = await api.snapshot();
  const out = await api.call('DELETE', '/v1/session', {
    headers: { cookie: s.cookie, 'x-baton-csrf': s.csrf },
    body: { everywhere: true },
  });
  assertProblem(out, 400, 'input_invalid');
  assert.equal(await api.snapshot(), after, 'the session was not ended');
  // A GET body (fetch will not send one) is refused too, not ignored.
  const get = await send(
    api,
    'GET',
    '/v1/domain',
    [`Authorization: Bearer ${api.admin}`, 'Content-Type: application/json'],
    '{"x":1}',
  );
  assertRawProblem(get, 400, 'input_invalid');
  assert.ok((await tokenIds(api)).includes(id), 'the token still exists');
  const revoked = await api.call('DELETE', `/v1/tokens/${id}`, { token: api.admin, body: {} });
  assert.equal(revoked.status, 200, revoked.text);
  const again = await api.call('DELETE', `/v1/tokens/${id}`, { token: api.admin });
  assert.equal(again.status, 200, again.text);
});

test('every answer is Cache-Control: no-store and X-Content-Type-Options: nosniff, secrets and problems alike, however the path is spelled', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  const noStore = (a: { headers: Headers; status: number }, what: string): void => {
    assert.equal(a.headers.get('cache-control'), 'no-store', `${what} (${a.status})`);
    // A JSON answer echoes client-chosen text: never sniffed as HTML or script (as the console's).
    assert.equal(a.headers.get('x-content-type-options'), 'nosniff', `${what} (${a.status})`);
  };
  noStore(
    await api.call('POST', '/v1/tokens', { token: api.admin, body: { role: 'operator' } }),
    'POST /v1/tokens',
  );
  noStore(await api.call('POST', '/v1/lineages/l1/takeover', { token: api.operator }), 'takeover');
  const session = await api.call('POST', '/v1/session', { body: { token: api.operator } });
  noStore(session, 'POST /v1/session');
  const cookie = /^(baton_session=[^;]+)/.exec(session.headers.get('set-cookie') ?? '')?.[1] ?? '';
  noStore(await api.call('GET', '/v1/session', { headers: { cookie } }), 'GET /v1/session');
  noStore(await api.call('GET', '/v1/counts', { token: api.operator }), 'GET /v1/domain');
  noStore(await api.call('GET', '/v1/counts'), 'a 401 problem');
  noStore(await api.call('GET', '/v1/no-such-route', { token: api.operator }), 'a 404 problem');
  // The router reaches /v1 by other spellings too: a percent-encoded path, an absolute-form target.
  const encoded = await api.call('POST', '/%761/tokens', { token: api.admin, body: { role: 'operator' } });
  assert.equal(encoded.status, 201, encoded.text);
  noStore(encoded, 'POST /%761/tokens');
  const port = new URL(api.url).port;
  const absolute = await raw(
    api.url,
    `POST http://127.0.0.1:${port}/v1/tokens HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${api.admin}\r\nContent-Type: application/json\r\nContent-Length: 19\r\nConnection: close\r\n\r\n{"role":"operator"}`,
  );
  assert.equal(absolute.status, 201, absolute.text);
  assert.match(absolute.head, /^cache-control: no-store$/im, 'absolute-form target');
  assert.match(absolute.head, /^x-content-type-options: nosniff$/im, 'absolute-form target');
  // Operational answers too; the console's files keep their own caching.
  noStore(await api.call('GET', '/readyz'), 'GET /readyz');
});

test('problems carry no framework-internal codes', async (t) => {
  const api = await startApi(t);
  const answers = [
    await api.call('PUT', '/v1/domain', { token: api.admin, raw: 'x', contentType: 'text/plain' }),
    await api.call('GET', '/v1/no-such-route', { token: api.operator }),
    await api.call('PUT', '/v1/domain', { token: api.admin, raw: '['.repeat(1_100_000) }),
  ];
  assert.deepEqual(
    answers.map((a) => a.status),
    [415, 404, 413],
  );
  for (const a of answers) assert.doesNotMatch(a.text, /FST_|ERR_/, a.text);
});
