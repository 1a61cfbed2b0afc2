/**
 * RFC 8935 §2.2 transmitter authentication at `POST /v1/missions/signals/{issuer}`: the stream
 * bearer is an RFC 6750 `Authorization: Bearer` credential, whose scheme name is case-insensitive
 * (RFC 9110 §11.1) — as Baton's own API reads it (src/server/auth.ts). A transmitter writing
 * `bearer` must not have its SETs refused `authentication_failed` (and so lost). Real reference
 * issuer, real signature, loopback HTTP, both engines; the library receiver (`parsePushedSet`) too.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePushedSet, SET_MEDIA_TYPE } from '../../src/missions/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { consumerWorld, STREAM_BEARER, suspensionSetHeld } from './consumer-world.js';

const engines = await enginesUnderTest();

for (const e of engines) {
  test(`[${e.name}] RFC 8935 §2.2 RFC 9110 §11.1 the push bearer's scheme is case-insensitive`, async (t) => {
    const w = await consumerWorld(t, e);
    const { mission, set } = await suspensionSetHeld(w);
    const path = `/v1/missions/signals/${encodeURIComponent(w.pin.issuer)}`;
    const pushed = await w.call('POST', path, {
      raw: set,
      contentType: SET_MEDIA_TYPE,
      headers: { authorization: `bearer  ${STREAM_BEARER}` },
    });
    assert.equal(pushed.status, 202, pushed.text);
    assert.equal((await w.harness.getView(w.pin.issuer, mission))?.state, 'suspended');
    // A wrong token under any spelling of the scheme is still refused.
    const wrong = await w.call('POST', path, {
      raw: set,
      contentType: SET_MEDIA_TYPE,
      headers: { authorization: `BEARER ${STREAM_BEARER}x` },
    });
    assert.deepEqual([wrong.status, wrong.body['err']], [401, 'authentication_failed']);

    // The library receiver reads the header the same way.
    const parsed = await parsePushedSet(
      { contentType: SET_MEDIA_TYPE, authorization: `bearer ${STREAM_BEARER}`, body: set },
      {
        keys: w.missions.keysFor(w.pin),
        expect: { issuer: w.pin.issuer, audience: w.pin.audience },
        bearer: STREAM_BEARER,
        nowMs: Date.now(),
      },
    );
    assert.equal(parsed.ok, true, JSON.stringify(parsed));
  });
}
