/**
 * Rotating a pinned issuer's SSF stream bearer (docs/missions.md "Rotating the stream bearer"):
 * `PUT /v1/missions/issuers/{issuer}/bearer` replaces the RFC 8935 push bearer (its digest) or the
 * RFC 8936 poll bearer reference, the pin itself untouched. The push receiver refuses the old
 * bearer from the COMMIT on (the same 401 as an unknown one) and takes the new; a poll loop presents
 * the new bearer at its next round. The same bearer is `unchanged`; a body of the wrong kind, none,
 * or a too-short bearer is `400 input_invalid` naming the path and changes nothing; an operator is
 * 403, an unknown issuer 404. Every replacement is an evidence event (never the bearer or its
 * digest) on a chain that still verifies. Real server, real reference issuer, loopback, both engines.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import { bearerDigest, SET_MEDIA_TYPE } from '../../src/missions/index.js';
import { verifyEvidence } from '../../src/store/index.js';
import { baton } from '../config/support.js';
import { assertProblem } from '../server/helpers.js';
import { enginesUnderTest } from '../store/engines.js';
import { AUDIENCE } from './issuer-support.js';
import {
  consumerWorld,
  issuerEvents,
  STREAM_BEARER,
  suspensionSetHeld,
  type ConsumerWorld,
} from './consumer-world.js';

const engines = await enginesUnderTest();

const NEW_BEARER = 'rotated-stream-bearer-fedcba9876543210-xyz';

const bearerPath = (w: ConsumerWorld): string =>
  `/v1/missions/issuers/${encodeURIComponent(w.pin.issuer)}/bearer`;

/** The issuer as an admin sees it (with the push bearer's digest; an operator sees none). */
async function issuerView(w: ConsumerWorld, token = w.admin): Promise<JsonObject> {
  const r = await w.call('GET', `/v1/missions/issuers/${encodeURIComponent(w.pin.issuer)}`, { token });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

for (const e of engines) {
  test(`[${e.name}] RFC 8935 §2.2 a rotated push bearer: the old one is 401 at once, the new one 202; the same again is unchanged`, async (t) => {
    const w = await consumerWorld(t, e);
    // The test delivers the next SET itself, with each bearer in turn.
    const { mission, set } = await suspensionSetHeld(w);
    const before = await issuerView(w);

    const put = await w.call('PUT', bearerPath(w), { token: w.admin, body: { pushBearer: NEW_BEARER } });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body['pushBearer'], true);
    assert.notEqual(put.body['pushBearerDigest'], before['pushBearerDigest'], 'the digest changed');
    assert.deepEqual(
      [put.body['pin'], put.body['pinDigest'], put.body['registeredAt']],
      [before['pin'], before['pinDigest'], before['registeredAt']],
      'the pin is untouched',
    );
    assert.ok(!put.text.includes(NEW_BEARER), 'the bearer is never shown');

    const signals = `/v1/missions/signals/${encodeURIComponent(w.pin.issuer)}`;
    const push = (bearer: string) =>
      w.call('POST', signals, {
        raw: set,
        contentType: SET_MEDIA_TYPE,
        headers: { authorization: `Bearer ${bearer}` },
      });
    const old = await push(STREAM_BEARER);
    const unknown = await push(`${NEW_BEARER}-not-it`);
    assert.deepEqual(
      [old.status, old.body],
      [unknown.status, unknown.body],
      'the old bearer is an unknown one',
    );
    assert.deepEqual([old.status, old.body['err']], [401, 'authentication_failed']);
    assert.equal((await w.harness.getView(w.pin.issuer, mission))?.state, 'active', 'nothing applied');
    const pushed = await push(NEW_BEARER);
    assert.equal(pushed.status, 202, pushed.text);
    assert.equal((await w.harness.getView(w.pin.issuer, mission))?.state, 'suspended');

    // The same bearer again: unchanged, no second event.
    const again = await w.call('PUT', bearerPath(w), { token: w.admin, body: { pushBearer: NEW_BEARER } });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body['pushBearerDigest'], put.body['pushBearerDigest']);
    const log = await issuerEvents(w);
    assert.deepEqual(log.types, ['mission_issuer_pinned', 'mission_issuer_bearer_replaced']);
    assert.deepEqual(JSON.parse(log.bodies[1] ?? ''), {
      delivery: 'urn:ietf:rfc:8935',
      push_bearer: true,
      poll_bearer_ref: null,
    });
    const digest = put.body['pushBearerDigest'];
    assert.equal(typeof digest, 'string');
    assert.ok(
      log.bodies.every((b) => !b.includes(NEW_BEARER) && !b.includes(digest as string)),
      'neither the bearer nor its digest is in the evidence',
    );
    assert.equal(log.ok, true, 'the issuer chain verifies');
    assert.equal((await verifyEvidence(w.engine)).ok, true, 'the whole log verifies');
  });

  test(`[${e.name}] a bearer replacement is refused, nothing changed: operator 403, unknown issuer 404, wrong kind, none or too short 400`, async (t) => {
    const w = await consumerWorld(t, e);
    assert.equal((await w.pinIssuer()).status, 201);
    const before = await issuerView(w);
    const operator = await w.call('PUT', bearerPath(w), {
      token: w.operator,
      body: { pushBearer: NEW_BEARER },
    });
    assertProblem(operator, 403, 'forbidden');
    const unknown = await w.call('PUT', '/v1/missions/issuers/http%3A%2F%2F127.0.0.1%3A9/bearer', {
      token: w.admin,
      body: { pushBearer: NEW_BEARER },
    });
    assertProblem(unknown, 404, 'mission_issuer_not_found');
    writeFileSync(join(w.dir, 'other-bearer'), NEW_BEARER);
    const refused: [string, JsonObject, RegExp][] = [
      [
        'a poll reference for a push pin',
        { pollBearerRef: `file:${join(w.dir, 'other-bearer')}` },
        /\$\.pollBearerRef/,
      ],
      ['no bearer', {}, /\$\.pushBearer/],
      ['a bearer too short', { pushBearer: 'short' }, /pushBearer/],
      ['both', { pushBearer: NEW_BEARER, pollBearerRef: 'env:BATON_SECRET_X' }, /\$\.pollBearerRef/],
      ['another member', { pushBearer: NEW_BEARER, pin: {} }, /pin/],
    ];
    for (const [what, body, path] of refused) {
      const r = await w.call('PUT', bearerPath(w), { token: w.admin, body });
      assertProblem(r, 400, 'input_invalid');
      assert.match(r.text, path, what);
    }
    assert.deepEqual(await issuerView(w), before, 'nothing changed');
    assert.deepEqual((await issuerEvents(w)).types, ['mission_issuer_pinned'], 'no event');
  });

  test(`[${e.name}] RFC 8936 a replaced poll bearer reference is presented at the next round; one outside the scope or unusable is 400`, async (t) => {
    const w = await consumerWorld(t, e);
    assert.equal((await w.pinIssuer({ poll: true })).status, 201);
    const [first] = await w.missions.pollAll();
    assert.equal(first?.error, null, 'the first round polls with the pinned bearer');
    const before = await issuerView(w);
    writeFileSync(join(w.dir, 'empty'), '\n');
    const refused: [JsonObject, RegExp][] = [
      [{ pushBearer: NEW_BEARER }, /\$\.pushBearer/],
      [{ pollBearerRef: 'file:/etc/passwd' }, /\$\.pollBearerRef: .*outside what this server allows/],
      [{ pollBearerRef: `file:${join(w.dir, 'empty')}` }, /\$\.pollBearerRef: .*the bearer is empty/],
      [{ pollBearerRef: `file:${join(w.dir, 'missing')}` }, /\$\.pollBearerRef: .*unreadable/],
    ];
    for (const [body, why] of refused) {
      const r = await w.call('PUT', bearerPath(w), { token: w.admin, body });
      assertProblem(r, 400, 'input_invalid');
      assert.match(r.text, why);
    }
    assert.deepEqual(await issuerView(w), before, 'nothing changed');

    // A client key broken meanwhile does not block rotating the bearer (only the bearer is judged).
    writeFileSync(w.pin.client.key_ref.slice('file:'.length), 'not a key');
    // The new reference names a bearer the issuer does not know yet: the next round presents it.
    const rotated = join(w.dir, 'rotated-poll-bearer');
    writeFileSync(rotated, NEW_BEARER);
    const put = await w.call('PUT', bearerPath(w), {
      token: w.admin,
      body: { pollBearerRef: `file:${rotated}` },
    });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body['pollBearerRef'], `file:${rotated}`);
    const [second] = await w.missions.pollAll();
    assert.equal(second?.error, 'unavailable', 'the issuer refused the new bearer: it was presented');
    // The issuer now knows the new bearer.
    const added = await w.issuer.admin('/admin/receivers', {
      audience: AUDIENCE,
      delivery: 'poll',
      bearer: NEW_BEARER,
    });
    assert.equal(added.status, 201);
    const [third] = await w.missions.pollAll();
    assert.equal(third?.error, null);
    const log = await issuerEvents(w);
    assert.deepEqual(log.types, ['mission_issuer_pinned', 'mission_issuer_bearer_replaced']);
    assert.deepEqual(JSON.parse(log.bodies[1] ?? ''), {
      delivery: 'urn:ietf:rfc:8936',
      push_bearer: false,
      poll_bearer_ref: `file:${rotated}`,
    });
    assert.equal(log.ok, true);
  });

  test(`[${e.name}] an operator sees whether a push bearer is set, never its digest; an admin sees the digest`, async (t) => {
    const w = await consumerWorld(t, e);
    assert.equal((await w.pinIssuer()).status, 201);
    const digest = bearerDigest(STREAM_BEARER);
    const list = (token: string) => w.call('GET', '/v1/missions/issuers', { token });
    for (const [who, token] of [
      ['operator', w.operator],
      ['admin', w.admin],
    ] as const) {
      const one = await issuerView(w, token);
      const all = await list(token);
      assert.equal(all.status, 200, all.text);
      const listed = (all.body['issuers'] as JsonObject[])[0] ?? {};
      for (const shown of [one, listed]) {
        assert.equal(shown['pushBearer'], true, who);
        if (who === 'operator') assert.equal('pushBearerDigest' in shown, false, 'no digest for an operator');
        else assert.equal(shown['pushBearerDigest'], digest, 'the digest for an admin');
      }
      if (who === 'operator') assert.ok(!all.text.includes(digest), 'nowhere in the operator list');
    }
    // The OpenAPI document says so: the member is optional and described as admin-only.
    const doc = await w.call('GET', '/openapi.json');
    const get = (doc.body['paths'] as JsonObject)['/v1/missions/issuers/{issuer}'] as JsonObject;
    const view = (
      (((get['get'] as JsonObject)['responses'] as JsonObject)['200'] as JsonObject)['content'] as JsonObject
    )['application/json'] as JsonObject;
    const schema = view['schema'] as JsonObject;
    assert.equal((schema['required'] as string[]).includes('pushBearerDigest'), false);
    const member = (schema['properties'] as JsonObject)['pushBearerDigest'] as JsonObject;
    assert.match(member['description'] as string, /admin only/);
  });

  test(`[${e.name}] a pin without a stream has no bearer to replace: 400, nothing changed`, async (t) => {
    const w = await consumerWorld(t, e);
    const r = await w.call('POST', '/v1/missions/issuers', {
      token: w.admin,
      body: { pin: { ...w.pin, stream: null } },
    });
    assert.equal(r.status, 201, r.text);
    const put = await w.call('PUT', bearerPath(w), { token: w.admin, body: { pushBearer: NEW_BEARER } });
    assertProblem(put, 400, 'input_invalid');
    assert.match(put.text, /no SSF stream/);
    assert.equal((await issuerView(w))['pushBearerDigest'], null);
    assert.deepEqual((await issuerEvents(w)).types, ['mission_issuer_pinned']);
  });
}

test('baton missions bearer: the push bearer read from a file replaces the stored one (admin); exactly one source; an operator is refused', async (t) => {
  const [e] = engines;
  assert.ok(e !== undefined);
  const w = await consumerWorld(t, e);
  assert.equal((await w.pinIssuer()).status, 201);
  const file = join(w.dir, 'new-bearer.txt');
  writeFileSync(file, `${NEW_BEARER}\n`);
  /** `baton missions bearer ISSUER SOURCES… --url URL --token TOKEN`. */
  const bearerCli = (sources: readonly string[], token: string) =>
    baton(['missions', 'bearer', w.pin.issuer, ...sources, '--url', w.url, '--token', token]);
  const fromFile = ['--push-bearer-file', file];
  const before = await issuerView(w);
  for (const sources of [[], [...fromFile, '--poll-bearer-ref', 'env:BATON_SECRET_X']]) {
    const r = await bearerCli(sources, w.admin);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /exactly one of --push-bearer-file FILE and --poll-bearer-ref REF/);
  }
  const operator = await bearerCli(fromFile, w.operator);
  assert.notEqual(operator.code, 0);
  assert.match(operator.err, /forbidden/);
  assert.deepEqual(await issuerView(w), before, 'nothing changed by a refusal');
  const done = await bearerCli(fromFile, w.admin);
  assert.equal(done.code, 0, done.err);
  assert.match(done.out, /^stream bearer of \S+ set \(urn:ietf:rfc:8935\)/);
  assert.doesNotMatch(done.out + done.err, new RegExp(NEW_BEARER), 'the bearer is never printed');
  const after = await issuerView(w);
  assert.equal(after['pushBearerDigest'], bearerDigest(NEW_BEARER));
  assert.notEqual(after['pushBearerDigest'], before['pushBearerDigest']);
});
