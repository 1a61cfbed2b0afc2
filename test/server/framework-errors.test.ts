/**
 * Every refusal is an RFC 9457 problem with a stable code — including the ones Fastify's router
 * and Node's HTTP parser make before any route runs — sent as raw bytes (node:net) to a real
 * server, so nothing in a client library tidies the request first. And the longest path
 * parameter the router takes is at least the documented maximum (128 characters, even when every
 * character is percent-encoded): the schema, not the router, refuses the 129th.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import { MAX_PARAM_LENGTH } from '../../src/server/framework-errors.js';
import { startApi } from './helpers.js';
import { assertRawProblem, raw } from './raw-http.js';

const get = (path: string, headers = ''): string =>
  `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}Connection: close\r\n\r\n`;

test('router and parser refusals are problems with codes: encoding, parameter length, headers, framing, type, size, route, method', async (t) => {
  const api = await startApi(t);
  const auth = `Authorization: Bearer ${api.operator}\r\n`;
  const admin = `Authorization: Bearer ${api.admin}\r\n`;
  const secret = 'sk_live_do_not_echo';
  const badUrl = await raw(api.url, get(`/v1/occurrences/${secret}%E0%A4%A`, auth));
  assertRawProblem(badUrl, 400, 'url_invalid');
  assert.doesNotMatch(badUrl.text, new RegExp(secret), 'the path is never echoed');
  assertRawProblem(
    await raw(api.url, get(`/v1/occurrences/a${'b'.repeat(MAX_PARAM_LENGTH)}`, auth)),
    414,
    'uri_too_long',
  );
  assertRawProblem(
    await raw(api.url, get('/healthz', `X-Big: ${'a'.repeat(20_000)}\r\n`)),
    431,
    'headers_too_large',
  );
  assertRawProblem(await raw(api.url, 'NOT HTTP AT ALL\r\n\r\n'), 400, 'http_malformed');
  const typed = `PUT /v1/domain HTTP/1.1\r\nHost: 127.0.0.1\r\n${admin}Content-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi`;
  assertRawProblem(await raw(api.url, typed), 415, 'media_type_unsupported');
  const big = '['.repeat(2_000_000);
  const large = `PUT /v1/domain HTTP/1.1\r\nHost: 127.0.0.1\r\n${admin}Content-Type: application/json\r\nContent-Length: ${big.length}\r\nConnection: close\r\n\r\n${big}`;
  assertRawProblem(await raw(api.url, large), 413, 'json_too_large');
  assertRawProblem(await raw(api.url, get('/v1/no-such-route', auth)), 404, 'not_found');
  assertRawProblem(
    await raw(api.url, `PATCH /v1/counts HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Connection: close\r\n\r\n`),
    404,
    'not_found',
  );
  const refusals = await api.call('GET', '/metrics');
  for (const code of ['url_invalid', 'uri_too_long', 'headers_too_large', 'http_malformed']) {
    assert.match(refusals.text, new RegExp(`code="${code}"`), `${code} is counted`);
  }
});

test('a path parameter of the documented 128 characters reaches the route even percent-encoded; the 129th is input_invalid', async (t) => {
  const api = await startApi(t);
  const doc = await api.call('GET', '/openapi.json');
  const op = ((doc.body['paths'] as JsonObject)['/v1/occurrences/{id}'] as JsonObject)['get'] as JsonObject;
  const id = (op['parameters'] as JsonObject[]).find((p) => p['name'] === 'id') as JsonObject;
  const documented = (id['schema'] as JsonObject)['maxLength'] as number;
  assert.equal(documented, 128);
  const name = `a${'@'.repeat(documented - 1)}`;
  const encoded = `a${'%40'.repeat(documented - 1)}`;
  assert.ok(encoded.length <= MAX_PARAM_LENGTH);
  for (const path of [name, encoded]) {
    const a = await api.call('GET', `/v1/occurrences/${path}`, { token: api.operator });
    assert.equal(a.status, 404, a.text);
    assert.equal(a.body['code'], 'occurrence_not_found', 'the route ran: the router took the parameter');
  }
  const over = await api.call('GET', `/v1/occurrences/${name}b`, { token: api.operator });
  assert.equal(over.status, 400, over.text);
  assert.equal(over.body['code'], 'input_invalid');
  const lineage = await api.call('GET', `/v1/lineages/${encoded}`, { token: api.operator });
  assert.equal(lineage.body['code'], 'lineage_not_found');
});

test('U+0000 in a query or a free-text member is input_invalid over HTTP, like every other text field', async (t) => {
  const api = await startApi(t);
  const subject = await api.call('GET', '/v1/evidence?subject=occurrence:a%00b', { token: api.operator });
  assert.equal(subject.status, 400, subject.text);
  assert.equal(subject.body['code'], 'input_invalid');
  const list = await api.call('GET', '/v1/occurrences?creationKey=a%00b', { token: api.operator });
  assert.equal(list.body['code'], 'input_invalid');
});
