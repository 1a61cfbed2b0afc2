/**
 * The pin's client key is checked when a registration is read, before the immutable pin is stored
 * (docs/missions.md "The client key"): a `key_ref` naming a PKCS#8 PEM, a JWK without kid, a public
 * JWK, a key of another type than `client.alg`, or a missing file is refused — 400 at the API,
 * `config_invalid` (exit 2) at `baton serve --config` — naming the path and the reason. A stored
 * pin whose key became unusable answers its checks `500 mission_client_key_unusable` (not
 * retryable, nothing sent), not a retryable `503 mission_status_unavailable` that reads as an
 * issuer outage. Real server, real reference issuer, loopback.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { baton, serveInProcess } from '../config/support.js';
import { assertProblem } from '../server/helpers.js';
import { enginesUnderTest } from '../store/engines.js';
import { tempDir } from '../store/support.js';
import { consumerWorld, STREAM_BEARER } from './consumer-world.js';
import { clientKey, startWorld } from './issuer-support.js';

const engines = await enginesUnderTest();

/** The world's client key, as the files an operator might point `key_ref` at. */
function keyFiles(dir: string, privateKey: KeyObject, kid: string) {
  const jwk = privateKey.export({ format: 'jwk' });
  const write = (name: string, text: string): string => {
    writeFileSync(join(dir, name), text);
    return `file:${join(dir, name)}`;
  };
  const ed = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
  const { d: _d, ...publicJwk } = jwk;
  return {
    good: write('good.jwk.json', JSON.stringify({ ...jwk, kid })),
    bad: [
      [
        'a PKCS#8 PEM',
        write('client.pem', privateKey.export({ format: 'pem', type: 'pkcs8' }) as string),
        /holds a PEM key, not a private JWK with kid/,
      ],
      ['a JWK without kid', write('nokid.jwk.json', JSON.stringify(jwk)), /the JWK has no kid/],
      [
        'a public JWK',
        write('public.jwk.json', JSON.stringify({ ...publicJwk, kid })),
        /public key \(no d\)/,
      ],
      [
        'an Ed25519 JWK for ES256',
        write('ed.jwk.json', JSON.stringify({ ...ed, kid })),
        /client\.alg ES256 signs with an EC P-256 key/,
      ],
      [
        'a JWK for another alg',
        write('alg.jwk.json', JSON.stringify({ ...jwk, kid, alg: 'ES384' })),
        /the JWK is for alg ES384/,
      ],
      ['no file', `file:${join(dir, 'missing.jwk.json')}`, /unreadable/],
    ] as const,
  };
}

for (const e of engines) {
  test(`[${e.name}] POST /v1/missions/issuers resolves and checks the client key and poll bearer before storing the pin`, async (t) => {
    const w = await consumerWorld(t, e);
    const files = keyFiles(w.dir, w.issuer.key.privateKey, w.issuer.key.kid);
    const push = (keyRef: string): object => ({
      pin: {
        ...w.pin,
        stream: { delivery: 'urn:ietf:rfc:8935' },
        client: { ...w.pin.client, key_ref: keyRef },
      },
      pushBearer: STREAM_BEARER,
    });
    for (const [what, ref, reason] of files.bad) {
      const r = await w.call('POST', '/v1/missions/issuers', { token: w.admin, body: push(ref) });
      assertProblem(r, 400, 'input_invalid');
      assert.ok(r.text.includes('$.pin.client.key_ref'), `${what}: names the path: ${r.text}`);
      assert.match(r.text, reason, what);
    }
    writeFileSync(join(w.dir, 'empty-bearer'), '\n');
    const poll = {
      pin: {
        ...w.pin,
        client: { ...w.pin.client, key_ref: files.good },
        stream: { delivery: 'urn:ietf:rfc:8936', endpoint: `${w.issuer.issuer.url}/ssf/poll` },
      },
      pollBearerRef: `file:${join(w.dir, 'empty-bearer')}`,
    };
    const r = await w.call('POST', '/v1/missions/issuers', { token: w.admin, body: poll });
    assertProblem(r, 400, 'input_invalid');
    assert.match(r.text, /\$\.pollBearerRef: .*the bearer is empty/);
    const listed = await w.call('GET', '/v1/missions/issuers', { token: w.operator });
    assert.deepEqual(listed.body['issuers'], [], 'nothing pinned');
    const ok = await w.call('POST', '/v1/missions/issuers', { token: w.admin, body: push(files.good) });
    assert.equal(ok.status, 201, ok.text);
  });

  test(`[${e.name}] a stored pin whose client key became unusable: 500 mission_client_key_unusable, not retryable, nothing sent; a fixed file is read again`, async (t) => {
    const w = await consumerWorld(t, e);
    const mission = await w.issuer.createMission();
    assert.equal((await w.pinIssuer()).status, 201);
    const keyFile = w.pin.client.key_ref.slice('file:'.length);
    const jwk = JSON.stringify({
      ...w.issuer.key.privateKey.export({ format: 'jwk' }),
      kid: w.issuer.key.kid,
    });
    writeFileSync(keyFile, w.issuer.key.privateKey.export({ format: 'pem', type: 'pkcs8' }));
    const path = `/v1/missions/${encodeURIComponent(w.pin.issuer)}/${mission}/check`;
    const sent = w.issuer.issuer.state.statusRequests;
    const r = await w.call('POST', path, { token: w.operator });
    assertProblem(r, 500, 'mission_client_key_unusable');
    assert.equal(r.body['retryable'], false, r.text);
    assert.match(r.text, /client\.key_ref .*holds a PEM key, not a private JWK with kid/);
    assert.equal(w.issuer.issuer.state.statusRequests, sent, 'nothing was sent to the issuer');
    const cli = await baton([
      'missions',
      'check',
      w.pin.issuer,
      mission,
      '--url',
      w.url,
      '--token',
      w.operator,
    ]);
    assert.notEqual(cli.code, 0);
    assert.match(cli.err, /mission_client_key_unusable/);
    const metrics = await w.call('GET', '/metrics', { token: w.operator });
    assert.match(metrics.text, /baton_mission_checks_total\{result="client_key_unusable"\} 2/);
    // The pin is immutable, the file it names is not: fixed in place, the next check uses it.
    writeFileSync(keyFile, jwk);
    const fixed = await w.call('POST', path, { token: w.operator });
    assert.equal(fixed.status, 200, fixed.text);
    assert.equal(fixed.body['state'], 'active');
  });

  test(`[${e.name}] a client key rotated in place is used at the next check, no restart; one made unusable after a good load is refused, not shadowed`, async (t) => {
    const w = await consumerWorld(t, e);
    const mission = await w.issuer.createMission();
    assert.equal((await w.pinIssuer()).status, 201);
    const path = `/v1/missions/${encodeURIComponent(w.pin.issuer)}/${mission}/check`;
    const first = await w.call('POST', path, { token: w.operator });
    assert.equal(first.body['state'], 'active', first.text);

    // Rotation: the issuer now knows only the new key; the operator replaces the file in place.
    const next = await clientKey('ES256', 'client-key-2');
    const registered = await w.issuer.admin('/admin/clients', {
      client_id: w.pin.client.client_id,
      jwks: { keys: [next.jwk] },
    });
    assert.equal(registered.status, 201);
    const keyFile = w.pin.client.key_ref.slice('file:'.length);
    writeFileSync(
      keyFile,
      JSON.stringify({ ...next.key.privateKey.export({ format: 'jwk' }), kid: next.key.kid }),
    );
    const rotated = await w.call('POST', path, { token: w.operator });
    assert.equal(rotated.status, 200, rotated.text);
    assert.equal(rotated.body['state'], 'active', `signed with the new key: ${rotated.text}`);

    // Broken after a good load: refused as unusable, nothing sent with the key loaded before.
    writeFileSync(keyFile, next.key.privateKey.export({ format: 'pem', type: 'pkcs8' }));
    const sent = w.issuer.issuer.state.statusRequests;
    const broken = await w.call('POST', path, { token: w.operator });
    assertProblem(broken, 500, 'mission_client_key_unusable');
    assert.equal(w.issuer.issuer.state.statusRequests, sent, 'nothing was sent to the issuer');
  });
}

test('baton serve --config: a client key that is no private JWK of client.alg refuses the file (exit 2, config_invalid naming the path) before the store is opened', async (t) => {
  const world = await startWorld();
  t.after(() => world.close());
  const dir = tempDir(t);
  const files = keyFiles(dir, world.key.privateKey, world.key.kid);
  writeFileSync(join(dir, 'bearer.txt'), `${STREAM_BEARER}\n`);
  const db = join(dir, 'baton.db');
  const config = join(dir, 'baton.config.json');
  const write = (keyRef: string): void =>
    writeFileSync(
      config,
      JSON.stringify({
        format: 'baton.config/1',
        issuers: [
          {
            pin: {
              ...world.pin,
              stream: { delivery: 'urn:ietf:rfc:8935' },
              client: { ...world.pin.client, key_ref: keyRef },
            },
            pushBearerRef: 'file:bearer.txt',
          },
        ],
      }),
    );
  for (const [what, ref, reason] of files.bad) {
    write(ref);
    const s = await serveInProcess(
      ['--db', db, '--port', '0', '--config', config, '--secret-dir', dir],
      (out) => out.includes('baton listening on '),
    );
    if (s.exited() === undefined) await s.stop(); // started: the key was not checked (a failure)
    assert.equal(s.exited(), 2, `${what}: ${s.err()}`);
    assert.match(s.err(), /config_invalid: \$\.issuers\[0\]\.pin\.client\.key_ref: /, what);
    assert.match(s.err(), reason, what);
    assert.equal(existsSync(db), false, `${what}: refused before the store was opened`);
  }
  write(files.good);
  const s = await serveInProcess(
    ['--db', db, '--port', '0', '--config', config, '--secret-dir', dir],
    (out) => out.includes('baton listening on '),
  );
  assert.equal(s.exited(), undefined, s.err());
  assert.match(s.err(), /created/);
  t.after(() => s.stop());
  await s.stop();

  // The stored pin's file replaced by a PEM: a restart says so on stderr, naming issuer and path.
  const keyFile = files.good.slice('file:'.length);
  writeFileSync(keyFile, world.key.privateKey.export({ format: 'pem', type: 'pkcs8' }));
  const again = await serveInProcess(['--db', db, '--port', '0', '--secret-dir', dir], (out) =>
    out.includes('baton listening on '),
  );
  t.after(() => again.stop());
  assert.equal(again.exited(), undefined, again.err());
  assert.match(
    again.err(),
    /mission issuer \S+: pin\.client\.key_ref: .*holds a PEM key, not a private JWK with kid.*mission_client_key_unusable/,
  );
});
