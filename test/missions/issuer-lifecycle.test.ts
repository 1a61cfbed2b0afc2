/**
 * The reference issuer itself (A7.25): the lifecycle table with idempotent repeats and 409s
 * (A2.3, C-A23), byte-identical 404s for unknown and not-visible missions (MST-06), client
 * authentication (MST-02: private_key_jwt or 401; Basic and secrets refused), the strict form
 * parser, the token endpoint (MCO-05: `at+jwt` only while active, `invalid_grant` otherwise), the
 * labelled metadata (A2.4) and the per-consumer rate limit.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { systemClock } from '../../src/core/clock.js';
import type { ForeignSigningKey } from '../../src/core/jose.js';
import {
  clientAssertion,
  CLIENT_ASSERTION_TYPE,
  missionAnchor,
  MissionStatusClient,
} from '../../src/missions/index.js';
import {
  AUDIENCE,
  AUTHORITY_SET,
  CLIENT_ID,
  clientKey,
  INTENT,
  startWorld,
  type World,
} from './issuer-support.js';

let world: World;
/** A client registered as an administrator, and ones the missions below name as Subject and Approver. */
let administrator: Actor;
let subject: Actor;
let approver: Actor;
let stranger: Actor;

interface Actor {
  readonly clientId: string;
  readonly key: ForeignSigningKey;
}

async function register(clientId: string, administrator = false): Promise<Actor> {
  const { key, jwk } = await clientKey('ES256', `${clientId}-key`);
  const registered = await world.admin('/admin/clients', {
    client_id: clientId,
    jwks: { keys: [jwk] },
    administrator,
  });
  assert.equal(registered.status, 201);
  return { clientId, key };
}

before(async () => {
  world = await startWorld();
  administrator = await register('client_issuer-admin', true);
  subject = await register('client_subject');
  approver = await register('client_approver');
  stranger = await register('client_stranger');
});
after(() => world.close());

async function form(
  path: string,
  params: Record<string, string>,
  extra: { raw?: string; headers?: Record<string, string>; auth?: boolean; as?: Actor } = {},
): Promise<Response> {
  const body = new URLSearchParams(params);
  if (extra.auth !== false) {
    const { key, clientId } = extra.as ?? { key: world.key, clientId: CLIENT_ID };
    body.set('client_assertion_type', CLIENT_ASSERTION_TYPE);
    body.set('client_assertion', await clientAssertion(key, clientId, world.pin.issuer, Date.now()));
  }
  return fetch(`${world.issuer.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...extra.headers },
    body: extra.raw ?? body.toString(),
    signal: AbortSignal.timeout(10_000),
  });
}

const NONCE = 'nonce_8Y3vN0sM6tP1xR9bQ5';
const lifecycle = (mission: string, operation: string, as?: Actor) =>
  form('/as/mission/lifecycle', { mission, operation, nonce: NONCE }, as === undefined ? {} : { as });

/** Everything a caller sees of an answer: status, the headers that could tell cases apart, bytes. */
async function seen(response: Response) {
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    cache: response.headers.get('cache-control'),
    length: response.headers.get('content-length'),
    body: await response.text(),
  };
}

/** The in-process record, read without the admin API (whose reads commit a due expiry). */
function recorded(id: string) {
  const mission = world.issuer.state.missions.get(id);
  assert.ok(mission !== undefined);
  return { state: mission.state, version: mission.version, transitions: mission.history.length };
}

test('A2.4: metadata names every endpoint, private_key_jwt only, and is labelled for development and tests', async () => {
  const metadata = (await (
    await fetch(`${world.issuer.url}/.well-known/oauth-authorization-server`)
  ).json()) as Record<string, unknown>;
  assert.equal(metadata['issuer'], world.issuer.origin);
  for (const member of [
    'token_endpoint',
    'jwks_uri',
    'mission_status_endpoint',
    'mission_lifecycle_endpoint',
    'mission_event_stream_endpoint',
  ]) {
    assert.match(String(metadata[member]), /^http:\/\/127\.0\.0\.1:\d+\//, member);
  }
  assert.equal(metadata['mission_bound_authorization_supported'], true);
  assert.deepEqual(metadata['authorization_details_types_supported'], ['mission_resource_access']);
  assert.equal(metadata['mission_max_stale_seconds'], 60);
  assert.deepEqual(metadata['token_endpoint_auth_methods_supported'], ['private_key_jwt']);
  assert.match(String(metadata['baton_reference_issuer']), /development and tests only/);
});

test('MCO-03/MCO-04: a created mission has 192-bit id and the A4 anchors over its issuer', async () => {
  const created = await world.admin('/admin/missions', {
    intent: INTENT,
    authority_set: AUTHORITY_SET,
    mission_expiry: '2099-01-01T00:00:00Z',
    clients: [CLIENT_ID],
  });
  assert.equal(created.status, 201);
  const id = created.body['mission_id'] as string;
  assert.match(id, /^msn_[A-Za-z0-9_-]{32}$/);
  assert.equal(created.body['intent_hash'], missionAnchor('intent', world.pin.issuer, INTENT));
  assert.equal(created.body['authority_hash'], missionAnchor('authority', world.pin.issuer, AUTHORITY_SET));
  assert.deepEqual([created.body['state'], created.body['version']], ['active', 1]);
});

test('A2.3/C-A23: the lifecycle table — legal moves, idempotent repeats (200), illegal moves (409)', async () => {
  const id = await world.createMission();
  // An administrator may request every operation (status draft "Authorization").
  const steps: Array<[string, number, string | null]> = [
    ['resume', 409, null], // never suspended: a conflict, not a no-op
    ['suspend', 200, 'suspended'],
    ['suspend', 200, 'suspended'], // repeat: no change
    ['complete', 409, null],
    ['resume', 200, 'active'],
    ['resume', 200, 'active'], // repeat of the operation that made the state
    ['complete', 200, 'completed'],
    ['complete', 200, 'completed'],
    ['revoke', 409, null], // terminal: accepts nothing
    ['suspend', 409, null],
  ];
  for (const [operation, status, state] of steps) {
    const answer = await lifecycle(id, operation, administrator);
    assert.equal(answer.status, status, `${operation} → ${status}`);
    if (status === 200) {
      assert.equal(answer.headers.get('content-type'), 'application/mission-status-response+jwt');
      const jws = await answer.text();
      const { payload } = await jwtVerify(jws, createLocalJWKSet(world.issuer.state.keys.jwks()), {
        typ: 'mission-status-response+jwt',
      });
      assert.equal((payload['mission'] as { state: string }).state, state);
      assert.equal(payload.aud, administrator.clientId, 'a lifecycle answer is addressed to the requester');
      assert.equal(payload['authorization_details'], undefined);
    } else assert.deepEqual(((await answer.json()) as { error: string }).error, 'conflict');
  }
  const view = await world.admin(`/admin/missions/${id}`);
  assert.deepEqual([view.body['state'], view.body['version']], ['completed', 4], 'repeats added no version');
});

test('MST-06: unknown and not-visible missions get byte-identical 404 answers', async () => {
  const hidden = await world.createMission({ clients: ['someone-else'] });
  const nonce = 'nonce_K9pV4nT2sR7mB1xQ';
  const answers = [];
  for (const mission of [hidden, 'msn_unknown000000000000000000000000']) {
    const response = await form('/as/mission/status', { mission, audience: AUDIENCE, nonce });
    answers.push({
      status: response.status,
      type: response.headers.get('content-type'),
      cache: response.headers.get('cache-control'),
      length: response.headers.get('content-length'),
      body: await response.text(),
    });
  }
  assert.equal(answers[0]!.status, 404);
  assert.deepEqual(answers[0], answers[1]);
  assert.deepEqual(JSON.parse(answers[0]!.body), {
    error: 'not_found',
    error_description: 'Mission reference is not found or not visible.',
    nonce,
  });
  const lifecycleAnswer = await lifecycle(hidden, 'revoke');
  assert.equal(lifecycleAnswer.status, 404, 'an unauthorised lifecycle request looks like not-found too');
  assert.equal((await world.admin(`/admin/missions/${hidden}`)).body['state'], 'active');
});

const UNKNOWN = 'msn_unknown000000000000000000000000';

test('status draft "Authorization": revoke by the Subject, Approver or an administrator; suspend and resume by an administrator; complete by the client or an administrator — anyone else gets the unknown mission\'s 404 bytes and nothing changes', async () => {
  const may: Record<string, readonly string[]> = {
    revoke: ['subject', 'approver', 'administrator'],
    suspend: ['administrator'],
    resume: ['administrator'],
    complete: ['client', 'administrator'],
  };
  const actors: Record<string, Actor> = {
    client: { clientId: CLIENT_ID, key: world.key },
    subject,
    approver,
    administrator,
    stranger,
  };
  for (const [operation, permitted] of Object.entries(may)) {
    for (const [role, actor] of Object.entries(actors)) {
      const id = await world.createMission({
        subject_client: subject.clientId,
        approver_client: approver.clientId,
      });
      if (operation === 'resume') assert.equal((await lifecycle(id, 'suspend', administrator)).status, 200);
      const before = recorded(id);
      const answer = await lifecycle(id, operation, actor);
      const what = `${operation} by the ${role}`;
      if (permitted.includes(role)) {
        assert.equal(answer.status, 200, what);
        await answer.body?.cancel();
        assert.equal(recorded(id).version, before.version + 1, `${what} commits`);
        continue;
      }
      const refused = await seen(answer);
      assert.equal(refused.status, 404, what);
      assert.deepEqual(
        refused,
        await seen(await lifecycle(UNKNOWN, operation, actor)),
        `${what}: as unknown`,
      );
      assert.deepEqual(recorded(id), before, `${what} changes nothing`);
    }
  }
});

test('POST /admin/clients: administrator is a boolean, anything else ⇒ 400 and nothing registered', async () => {
  const { jwk } = await clientKey();
  const answer = await world.admin('/admin/clients', {
    client_id: 'client_not-registered',
    jwks: { keys: [jwk] },
    administrator: 'yes',
  });
  assert.equal(answer.status, 400);
  assert.equal(world.issuer.state.clients.has('client_not-registered'), false);
});

test('MST-06: a known mission past its expiry that the caller may not see answers as an unknown one and commits nothing', async () => {
  const expired = await world.createMission({
    clients: ['someone-else'],
    mission_expiry: '2020-01-01T00:00:00Z',
  });
  const nonce = 'nonce_K9pV4nT2sR7mB1xQ';
  const status = async (mission: string) =>
    seen(await form('/as/mission/status', { mission, audience: AUDIENCE, nonce }));
  const hidden = await status(expired);
  assert.equal(hidden.status, 404);
  assert.deepEqual(hidden, await status(UNKNOWN));
  for (const actor of [undefined, stranger]) {
    const refused = await seen(await lifecycle(expired, 'revoke', actor));
    assert.equal(refused.status, 404);
    assert.deepEqual(refused, await seen(await lifecycle(UNKNOWN, 'revoke', actor)));
  }
  assert.deepEqual(
    recorded(expired),
    { state: 'active', version: 1, transitions: 1 },
    'no permitted access yet: the due expiry is not committed (no transition, no SET)',
  );
  // A permitted access commits the due expiry first, and is answered with it.
  const visible = await world.createMission({ mission_expiry: '2020-01-01T00:00:00Z' });
  const answer = await form('/as/mission/status', { mission: visible, audience: AUDIENCE, nonce });
  assert.equal(answer.status, 200);
  assert.equal((decodeJwt(await answer.text())['mission'] as { state: string }).state, 'expired');
  assert.deepEqual(recorded(visible), { state: 'expired', version: 2, transitions: 2 });
  assert.equal(
    (await world.admin(`/admin/missions/${expired}`)).body['state'],
    'expired',
    'the admin API too',
  );
});

test('MST-02: no assertion, Basic, a client_secret, a replayed or foreign assertion ⇒ 401', async () => {
  const mission = await world.createMission();
  const params = { mission, audience: AUDIENCE, nonce: 'n1' };
  assert.equal((await form('/as/mission/status', params, { auth: false })).status, 401);
  assert.equal(
    (await form('/as/mission/status', params, { headers: { authorization: 'Basic Y2xpZW50OnNlY3JldA==' } }))
      .status,
    401,
  );
  assert.equal((await form('/as/mission/status', { ...params, client_secret: 'secret' })).status, 401);
  const assertion = await clientAssertion(world.key, CLIENT_ID, world.pin.issuer, Date.now());
  const once = { ...params, client_assertion_type: CLIENT_ASSERTION_TYPE, client_assertion: assertion };
  assert.equal((await form('/as/mission/status', once, { auth: false })).status, 200);
  assert.equal((await form('/as/mission/status', once, { auth: false })).status, 401, 'jti is single use');
  const stranger = await clientKey('ES256', 'client-key-1');
  const foreign = await clientAssertion(stranger.key, CLIENT_ID, world.pin.issuer, Date.now());
  assert.equal(
    (
      await form(
        '/as/mission/status',
        { ...params, client_assertion_type: CLIENT_ASSERTION_TYPE, client_assertion: foreign },
        { auth: false },
      )
    ).status,
    401,
  );
});

test('strict form parser: a parameter given twice ⇒ 400 invalid_request, nothing changes', async () => {
  const mission = await world.createMission();
  const assertion = await clientAssertion(world.key, CLIENT_ID, world.pin.issuer, Date.now());
  const raw = `mission=${mission}&operation=revoke&operation=suspend&nonce=n&client_assertion_type=${encodeURIComponent(CLIENT_ASSERTION_TYPE)}&client_assertion=${assertion}`;
  const answer = await form('/as/mission/lifecycle', {}, { raw, auth: false });
  assert.equal(answer.status, 400);
  assert.equal(((await answer.json()) as { error: string }).error, 'invalid_request');
  assert.equal((await world.admin(`/admin/missions/${mission}`)).body['state'], 'active');
});

test('MCO-05: the token endpoint issues an at+jwt with the mission claim only while active; invalid_grant after', async () => {
  const mission = await world.createMission();
  const grant = { grant_type: 'client_credentials', mission, resource: AUDIENCE };
  const issued = await form('/as/token', grant);
  assert.equal(issued.status, 200);
  const { access_token: token } = (await issued.json()) as { access_token: string };
  assert.equal(decodeProtectedHeader(token).typ, 'at+jwt');
  const { payload } = await jwtVerify(token, createLocalJWKSet(world.issuer.state.keys.jwks()), {
    typ: 'at+jwt',
    issuer: world.pin.issuer,
    audience: AUDIENCE,
  });
  assert.deepEqual(payload['mission'], {
    id: mission,
    origin: world.pin.issuer,
    authority_hash: missionAnchor('authority', world.pin.issuer, AUTHORITY_SET),
  });
  assert.ok(payload.exp! - payload.iat! <= 300);
  await world.admin(`/admin/missions/${mission}/suspend`, {});
  const refused = await form('/as/token', grant);
  assert.equal(refused.status, 400);
  assert.equal(((await refused.json()) as { error: string }).error, 'invalid_grant');
});

test('narrowing changes authority_hash without a lifecycle version; widening is refused', async () => {
  const mission = await world.createMission();
  const narrowed = await world.admin(`/admin/missions/${mission}/narrow`, {
    authority_set: [AUTHORITY_SET[0]],
  });
  assert.equal(narrowed.status, 200);
  assert.equal(
    narrowed.body['authority_hash'],
    missionAnchor('authority', world.pin.issuer, [AUTHORITY_SET[0]!]),
  );
  assert.equal(narrowed.body['version'], 1);
  const wider = await world.admin(`/admin/missions/${mission}/narrow`, {
    authority_set: [{ ...AUTHORITY_SET[0], actions: ['invoices.read', 'invoices.delete'] }],
  });
  assert.equal(wider.status, 400);
  const status = await world.client.check(mission);
  assert.equal(status.kind === 'verified' && status.status.authorityHash, narrowed.body['authority_hash']);
});

test('MST-06: per-consumer rate limit answers 429 with Retry-After and retry_after', async () => {
  const limited = await startWorld({ rateLimitPerMinute: 2 });
  try {
    const mission = await limited.createMission();
    // The header as it left the issuer (the client would read the body's retry_after alone too).
    let header: string | null = null;
    const client = new MissionStatusClient({
      pin: limited.pin,
      clientKey: limited.key,
      keys: limited.keys,
      clock: systemClock,
      fetch: async (url, init) => {
        const response = await fetch(url, init);
        header = response.headers.get('retry-after');
        return response;
      },
    });
    assert.equal((await client.check(mission)).kind, 'verified');
    assert.equal((await client.check(mission)).kind, 'verified');
    const third = await client.check(mission);
    assert.equal(third.kind === 'unknown' && third.reason, 'rate_limited');
    assert.ok(third.kind === 'unknown' && third.retryAfterSec !== null && third.retryAfterSec >= 1);
    assert.match(String(header), /^[1-9][0-9]*$/, 'Retry-After is on the wire');
    assert.equal(third.kind === 'unknown' && third.retryAfterSec, Number(header));
  } finally {
    await limited.close();
  }
});

test('admin API refuses a missing or wrong bearer', async () => {
  const response = await fetch(`${world.issuer.url}/admin/missions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer wrong' },
    body: '{}',
  });
  assert.equal(response.status, 401);
});

test('SSF stream bearers: each receiver is known by its own bearer only (digests compared in constant time)', async () => {
  const bearers = ['stream-bearer-aaaaaaaaaaaaaaaaaaaaaaaa', 'stream-bearer-bbbbbbbbbbbbbbbbbbbbbbbb'];
  const audiences = ['https://one.example', 'https://two.example'];
  for (const [i, bearer] of bearers.entries())
    assert.equal(
      (await world.admin('/admin/receivers', { audience: audiences[i], delivery: 'poll', bearer })).status,
      201,
    );
  const stream = (authorization?: string): Promise<Response> =>
    fetch(`${world.issuer.url}/ssf/stream`, {
      ...(authorization !== undefined && { headers: { authorization } }),
    });
  for (const [i, bearer] of bearers.entries()) {
    const known = await stream(`Bearer ${bearer}`);
    assert.equal(known.status, 200);
    assert.equal(((await known.json()) as { aud?: string }).aud, audiences[i]);
  }
  const wrong = [
    `Bearer ${bearers[0]!.slice(0, -1)}b`, // same length, last character off
    `Bearer ${bearers[0]!.slice(0, -1)}`, // a prefix
    `Bearer ${bearers[0]}x`, // longer
    'Bearer ',
    bearers[0]!, // no scheme
  ];
  for (const authorization of [...wrong, undefined]) {
    const refused = await stream(authorization);
    assert.equal(refused.status, 401, `refused: ${authorization ?? '(none)'}`);
    await refused.body?.cancel();
  }
  const poll = await fetch(`${world.issuer.url}/ssf/poll`, {
    method: 'POST',
    headers: { authorization: wrong[0]!, 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(poll.status, 401);
});
