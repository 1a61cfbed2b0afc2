/**
 * The RFC 8935 push receiver (`POST /v1/missions/signals/{issuer}`) of a real Baton app on
 * loopback, with a pinned push issuer: whatever the Content-Type — text/plain, none at all, JSON,
 * even a JSON body Baton's strict parser would refuse — the request reaches the receiver, which
 * answers in RFC 8935 §2.4's form, `400 application/json {"err":"invalid_request","description"}`
 * (after the stream bearer, §2.2: a wrong one is `401 authentication_failed` first), never the
 * framework's `415` problem+json the OpenAPI document does not promise. Nothing is stored. The
 * 64 KiB limit stays; every other route still takes JSON only.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import { assertProblem, startApi, type Answer, type Api } from './helpers.js';
import { raw } from './raw-http.js';

const ISSUER = 'https://as.example.com';
const STREAM_BEARER = 'stream-bearer-0123456789abcdef-0123456789';

// The client key the pin names: never used (no SET verifies), but checked when the pin is registered.
process.env['BATON_SECRET_SET_PUSH_TEST_KEY'] = JSON.stringify({
  ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }),
  kid: 'client-key-1',
});

/** A push issuer pinned with its stream bearer (the client key is never needed: no SET verifies). */
const registration = {
  pin: {
    format: 'baton.mission-issuer/1',
    issuer: ISSUER,
    jwks_uri: `${ISSUER}/.well-known/jwks.json`,
    endpoints: {
      status: `${ISSUER}/as/mission/status`,
      lifecycle: `${ISSUER}/as/mission/lifecycle`,
      token: `${ISSUER}/as/token`,
      event_stream: `${ISSUER}/ssf/stream`,
    },
    algorithms: ['ES256', 'EdDSA'],
    client: {
      client_id: 'client_baton',
      auth_method: 'private_key_jwt',
      key_ref: 'env:BATON_SECRET_SET_PUSH_TEST_KEY',
      alg: 'ES256',
    },
    audience: 'https://baton.example.com',
    bounds: { max_stale_seconds: 60 },
    stream: { delivery: 'urn:ietf:rfc:8935' },
  },
  pushBearer: STREAM_BEARER,
};

const WRONG_MEDIA = { err: 'invalid_request', description: 'Content-Type is not application/secevent+jwt' };

/** A push as fetch sends it: `contentType` null sends no Content-Type header at all. */
async function push(
  w: Api,
  body: Uint8Array | undefined,
  contentType: string | null,
  bearer = STREAM_BEARER,
): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${bearer}` };
  if (contentType !== null) headers['content-type'] = contentType;
  const res = await fetch(`${w.url}/v1/missions/signals/${encodeURIComponent(ISSUER)}`, {
    method: 'POST',
    headers,
    ...(body !== undefined && { body }),
  });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  const parsed = type.includes('json') && text !== '' ? (JSON.parse(text) as Answer['body']) : {};
  return { status: res.status, type, headers: res.headers, body: parsed, text };
}

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

function assertRfc8935(a: Answer, status: number, expected: Record<string, string>, what: string): void {
  assert.equal(a.status, status, `${what}: ${a.status} ${a.text}`);
  assert.match(a.type, /^application\/json/, `${what}: RFC 8935's JSON, not problem+json`);
  assert.deepEqual(a.body, expected, what);
}

test('SET push with a wrong or missing Content-Type answers RFC 8935 400 invalid_request, not 415, and stores nothing', async (t) => {
  const w = await startApi(t);
  const pinned = await w.call('POST', '/v1/missions/issuers', { token: w.admin, body: registration });
  assert.equal(pinned.status, 201, pinned.text);
  const before = await w.snapshot();

  assertRfc8935(await push(w, bytes('a.b.c'), 'text/plain'), 400, WRONG_MEDIA, 'text/plain');
  assertRfc8935(
    await push(w, bytes('a.b.c'), 'text/plain; charset=utf-8'),
    400,
    WRONG_MEDIA,
    'text/plain with a parameter',
  );
  assertRfc8935(await push(w, bytes('a.b.c'), null), 400, WRONG_MEDIA, 'a body without Content-Type');
  assertRfc8935(await push(w, undefined, null), 400, WRONG_MEDIA, 'no body, no Content-Type');
  assertRfc8935(
    await push(w, bytes('a.b.c'), 'application/octet-stream'),
    400,
    WRONG_MEDIA,
    'application/octet-stream',
  );
  // A JSON body the app's strict parser would refuse is not parsed here either.
  assertRfc8935(
    await push(w, bytes('{"a":1,"a":2}'), 'application/json'),
    400,
    WRONG_MEDIA,
    'application/json with a duplicate member',
  );
  // The stream bearer is checked first (RFC 8935 §2.2), whatever the media type.
  assertRfc8935(
    await push(w, bytes('a.b.c'), 'text/plain', 'nope-nope-nope-nope-nope-nope-nope'),
    401,
    { err: 'authentication_failed', description: 'stream bearer missing or wrong' },
    'text/plain with a wrong bearer',
  );
  // The right media type still reaches SET verification (a malformed SET is invalid_request).
  const garbage = await push(w, bytes('not-a-jwt'), 'application/secevent+jwt');
  assert.equal(garbage.status, 400, garbage.text);
  assert.equal(garbage.body['err'], 'invalid_request');
  // The body limit stays 64 KiB, for any media type.
  const big = new Uint8Array(64 * 1024 + 1).fill(0x61);
  assertProblem(await push(w, big, 'text/plain'), 413, 'json_too_large');
  assertProblem(await push(w, big, 'application/secevent+jwt'), 413, 'json_too_large');

  assert.equal(await w.snapshot(), before, 'no refused push changed any row');
  const metrics = await w.call('GET', '/metrics');
  assert.doesNotMatch(metrics.text, /baton_sets_received_total\{result="applied"\} [1-9]/);

  // Every other route still parses JSON only: a SET media type there is 415.
  assertProblem(
    await w.call('POST', '/v1/missions/issuers', {
      token: w.admin,
      raw: 'a.b.c',
      contentType: 'application/secevent+jwt',
    }),
    415,
    'media_type_unsupported',
  );
  assertProblem(
    await w.call('POST', '/v1/missions/issuers', { token: w.admin, raw: 'x', contentType: 'text/plain' }),
    415,
    'media_type_unsupported',
  );
});

test('SET push with two Authorization or two Content-Type headers is RFC 8935 400 invalid_request, even when one bearer is right', async (t) => {
  const w = await startApi(t);
  const pinned = await w.call('POST', '/v1/missions/issuers', { token: w.admin, body: registration });
  assert.equal(pinned.status, 201, pinned.text);
  const before = await w.snapshot();
  const path = `/v1/missions/signals/${encodeURIComponent(ISSUER)}`;
  const send = (headers: readonly string[]): ReturnType<typeof raw> =>
    raw(
      w.url,
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers.map((h) => `${h}\r\n`).join('')}` +
        'Content-Length: 9\r\nConnection: close\r\n\r\nnot-a-jwt',
    );
  const right = `Authorization: Bearer ${STREAM_BEARER}`;
  const wrong = 'Authorization: Bearer nope-nope-nope-nope-nope-nope-nope';
  const set = 'Content-Type: application/secevent+jwt';
  for (const [headers, name] of [
    [[right, wrong, set], 'Authorization'],
    [[wrong, right, set], 'Authorization'],
    [[right, set, 'Content-Type: text/plain'], 'Content-Type'],
  ] as const) {
    const a = await send(headers);
    assert.equal(a.status, 400, a.text);
    assert.match(a.type, /^application\/json/, 'RFC 8935 JSON, not problem+json');
    assert.deepEqual(a.body, { err: 'invalid_request', description: `more than one ${name} header` });
    assert.ok(!a.text.includes(STREAM_BEARER), 'the bearer is never echoed');
  }
  // One of each still reaches SET verification (a malformed SET is invalid_request, not a header error).
  const one = await send([right, set]);
  assert.equal(one.status, 400, one.text);
  assert.notEqual(one.body['description'], 'more than one Authorization header');
  assert.equal(await w.snapshot(), before, 'nothing stored');
});
