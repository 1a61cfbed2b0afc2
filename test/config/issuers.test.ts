/**
 * The config's `issuers` section (docs/config.md) through `baton apply` over HTTP to a real
 * server: a pin file relative to the config, a push bearer read from a file reference (the config
 * holds no secret; the server stores its digest), idempotent re-apply, a changed bearer under the
 * same pin `updated` (the rotation: the old bearer refused from then on, the new one taken), and a
 * changed pin refused as `config_conflict` before the first write.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import { SET_MEDIA_TYPE } from '../../src/missions/index.js';
import { request, startApi } from '../server/helpers.js';
import { LOOPBACK_PUSH_PIN, writeClientKey } from '../missions/fixtures.js';
import { baton, serveInProcess, tempDir } from './support.js';

const PIN = LOOPBACK_PUSH_PIN;

/** What the push route answers a bearer: 401 when it is not the pinned one, else past the bearer check. */
async function pushWith(api: { url: string }, bearer: string): Promise<[number, unknown]> {
  const r = await request(api.url, 'POST', `/v1/missions/signals/${encodeURIComponent(PIN.issuer)}`, {
    raw: 'not.a.set',
    contentType: SET_MEDIA_TYPE,
    headers: { authorization: `Bearer ${bearer}` },
  });
  return [r.status, r.body['err']];
}

test('issuers: applied from a pin file with a push bearer reference, unchanged on re-apply, a changed bearer updated, a changed pin refused before any write', async (t) => {
  const dir = tempDir(t);
  const api = await startApi(t, { secretDirs: [dir] });
  writeFileSync(join(dir, 'issuer.json'), JSON.stringify(PIN));
  writeClientKey(dir); // the key the pin names: the server checks it before pinning
  writeFileSync(join(dir, 'bearer.txt'), 'a-push-bearer-of-at-least-32-characters\n');
  const config = {
    format: 'baton.config/1',
    issuers: [{ file: 'issuer.json', pushBearerRef: 'file:bearer.txt' }],
  };
  const file = join(dir, 'baton.config.json');
  writeFileSync(file, JSON.stringify(config));
  const args = ['apply', file, '--url', api.url, '--token', api.admin];
  const first = await baton(args);
  assert.equal(first.code, 0, first.err);
  assert.match(first.out + first.err, /issuer http:\/\/127\.0\.0\.1:9: created/);
  const shown = await api.call('GET', `/v1/missions/issuers/${encodeURIComponent(PIN.issuer)}`, {
    token: api.operator,
  });
  assert.equal(shown.status, 200, shown.text);
  const pin = shown.body['pin'] as JsonObject;
  assert.equal(
    (pin['client'] as JsonObject)['key_ref'],
    `file:${join(dir, 'client.jwk.json')}`,
    'made absolute',
  );
  assert.ok(!shown.text.includes('a-push-bearer-of-at-least'), 'never the bearer');
  assert.equal(shown.body['pushBearer'], true);
  assert.equal('pushBearerDigest' in shown.body, false, "an operator is not shown the bearer's digest");

  const again = await baton(args);
  assert.equal(again.code, 0, again.err);
  assert.match(again.out + again.err, /issuer http:\/\/127\.0\.0\.1:9: unchanged/);
  // An operator cannot tell the same bearer from another (no digest shown): the bearer is planned
  // as replaced, an admin-only write, refused before anything is written.
  const unread = await api.snapshot();
  const asOperator = await baton(['apply', file, '--url', api.url, '--token', api.operator]);
  assert.equal(asOperator.code, 1, asOperator.out);
  assert.match(
    asOperator.err,
    /forbidden: nothing applied: issuer http:\/\/127\.0\.0\.1:9 need an admin token/,
  );
  assert.equal(await api.snapshot(), unread, 'nothing written');

  // The bearer rotated in its file: the same pin is updated, the new bearer taken at once.
  const oldBearer = 'a-push-bearer-of-at-least-32-characters';
  const newBearer = 'another-push-bearer-of-at-least-32-chars';
  assert.deepEqual(await pushWith(api, oldBearer), [400, 'invalid_request'], 'past the bearer check');
  writeFileSync(join(dir, 'bearer.txt'), newBearer);
  const changed = await baton(args);
  assert.equal(changed.code, 0, changed.err);
  assert.match(changed.out + changed.err, /issuer http:\/\/127\.0\.0\.1:9: updated/);
  assert.deepEqual(await pushWith(api, oldBearer), [401, 'authentication_failed'], 'the old bearer');
  assert.deepEqual(await pushWith(api, newBearer), [400, 'invalid_request'], 'the new bearer');
  const rotated = await baton(args);
  assert.match(rotated.out + rotated.err, /issuer http:\/\/127\.0\.0\.1:9: unchanged/);

  const before = await api.snapshot();
  writeFileSync(join(dir, 'issuer.json'), JSON.stringify({ ...PIN, audience: 'https://other.example' }));
  writeFileSync(join(dir, 'bearer.txt'), oldBearer); // a pin and bearer changed: still a conflict
  const repinned = await baton(args);
  assert.equal(repinned.code, 1, repinned.out);
  assert.match(
    repinned.err,
    /config_conflict: nothing applied: issuer http:\/\/127\.0\.0\.1:9: pinned with another pin/,
  );
  assert.equal(await api.snapshot(), before, 'nothing written');

  writeFileSync(file, JSON.stringify({ ...config, issuers: [{ file: 'issuer.json' }] }));
  const missing = await baton(args);
  assert.equal(missing.code, 2, missing.out);
  assert.match(
    missing.err,
    /config_invalid: \$\.issuers\[0\]\.pushBearer: is required exactly when the pin streams by push/,
  );
});

test("issuers: a key reference outside the server's scope (--secret-dir, BATON_SECRET_*) is refused by the server, nothing pinned", async (t) => {
  const dir = tempDir(t);
  const api = await startApi(t, { secretDirs: [dir] });
  writeFileSync(join(dir, 'bearer.txt'), 'a-push-bearer-of-at-least-32-characters\n');
  for (const [keyRef, refused] of [
    // Only the server knows its folders: it refuses the issuer (input_invalid).
    ['file:/etc/hostname', /input_invalid.*\$\.pin\.client\.key_ref.*outside what this server allows/],
    // The variable rule is the same for every server: refused before the first write.
    [
      'env:BATON_POSTGRES_URL',
      /config_invalid: \$\.issuers\[0\]\.pin\.client\.key_ref: .*outside what this server allows/,
    ],
  ] as const) {
    const pin = { ...PIN, client: { ...PIN.client, key_ref: keyRef } };
    const file = join(dir, 'baton.config.json');
    writeFileSync(
      file,
      JSON.stringify({ format: 'baton.config/1', issuers: [{ pin, pushBearerRef: 'file:bearer.txt' }] }),
    );
    const before = await api.snapshot();
    const r = await baton(['apply', file, '--url', api.url, '--token', api.admin]);
    assert.notEqual(r.code, 0, r.out);
    assert.match(r.err, refused);
    assert.equal(await api.snapshot(), before, `${keyRef}: nothing written`);
  }
});

test("issuers: an operator's apply that would pin an issuer is refused forbidden before its first write (no profile or authority half-applied)", async (t) => {
  const dir = tempDir(t);
  const api = await startApi(t, { secretDirs: [dir] });
  writeFileSync(join(dir, 'issuer.json'), JSON.stringify(PIN));
  writeClientKey(dir); // the key the pin names: the server checks it before pinning
  writeFileSync(join(dir, 'bearer.txt'), 'a-push-bearer-of-at-least-32-characters\n');
  const config = {
    format: 'baton.config/1',
    authorities: [{ id: 'operator-budget', unit: 'EUR-cents', total: 1000 }],
    issuers: [{ file: 'issuer.json', pushBearerRef: 'file:bearer.txt' }],
  };
  const file = join(dir, 'baton.config.json');
  writeFileSync(file, JSON.stringify(config));
  const before = await api.snapshot();
  const r = await baton(['apply', file, '--url', api.url, '--token', api.operator]);
  assert.equal(r.code, 1, r.out);
  assert.match(r.err, /forbidden: nothing applied: issuer http:\/\/127\.0\.0\.1:9 need an admin token/);
  assert.equal(
    await api.snapshot(),
    before,
    'nothing written: not even the authority an operator may create',
  );
  const admin = await baton(['apply', file, '--url', api.url, '--token', api.admin]);
  assert.equal(admin.code, 0, admin.err);
});

test('issuers: serve --config with the same pin and a rotated push bearer file updates the bearer in the store it opens', async (t) => {
  const dir = tempDir(t);
  writeClientKey(dir);
  writeFileSync(join(dir, 'bearer.txt'), 'a-push-bearer-of-at-least-32-characters\n');
  const file = join(dir, 'baton.config.json');
  writeFileSync(
    file,
    JSON.stringify({ format: 'baton.config/1', issuers: [{ pin: PIN, pushBearerRef: 'file:bearer.txt' }] }),
  );
  const argv = ['--db', join(dir, 'baton.db'), '--port', '0', '--config', file, '--secret-dir', dir];
  const listening = (out: string): boolean => out.includes('baton listening on ');
  const first = await serveInProcess(argv, listening);
  t.after(() => first.stop());
  assert.equal(first.exited(), undefined, first.err());
  assert.match(first.err(), /issuer http:\/\/127\.0\.0\.1:9: created/);
  await first.stop();

  writeFileSync(join(dir, 'bearer.txt'), 'another-push-bearer-of-at-least-32-chars');
  const second = await serveInProcess(argv, listening);
  t.after(() => second.stop());
  assert.equal(second.exited(), undefined, second.err());
  assert.match(second.err(), /issuer http:\/\/127\.0\.0\.1:9: updated/);
  const url = /baton listening on (http:\/\/\S+)/.exec(second.out())?.[1] ?? '';
  assert.deepEqual(await pushWith({ url }, 'a-push-bearer-of-at-least-32-characters'), [
    401,
    'authentication_failed',
  ]);
  assert.deepEqual(await pushWith({ url }, 'another-push-bearer-of-at-least-32-chars'), [
    400,
    'invalid_request',
  ]);
});

test("issuers: an operator's apply of an unchanged issuer with no push bearer is unchanged (the API tells it pushBearer: false)", async (t) => {
  const dir = tempDir(t);
  const api = await startApi(t, { secretDirs: [dir] });
  writeClientKey(dir);
  const noStream = { ...PIN, stream: null }; // no stream: no bearer
  const file = join(dir, 'baton.config.json');
  writeFileSync(file, JSON.stringify({ format: 'baton.config/1', issuers: [{ pin: noStream }] }));
  const admin = await baton(['apply', file, '--url', api.url, '--token', api.admin]);
  assert.equal(admin.code, 0, admin.err);
  assert.match(admin.out, /^issuer http:\/\/127\.0\.0\.1:9: created$/m);
  const before = await api.snapshot();
  const r = await baton(['apply', file, '--url', api.url, '--token', api.operator]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^issuer http:\/\/127\.0\.0\.1:9: unchanged$/m);
  assert.match(r.out, /^unchanged: nothing to apply$/m);
  assert.equal(await api.snapshot(), before);
});

test('issuers: the same config in a moved checkout names the pin member that differs and both values', async (t) => {
  const root = tempDir(t);
  const api = await startApi(t, { secretDirs: [root] });
  const config = JSON.stringify({
    format: 'baton.config/1',
    issuers: [{ pin: PIN, pushBearerRef: 'file:bearer.txt' }],
  });
  const checkouts = ['relA', 'relB'].map((name) => {
    const dir = join(root, name);
    mkdirSync(dir);
    writeClientKey(dir);
    writeFileSync(join(dir, 'bearer.txt'), 'a-push-bearer-of-at-least-32-characters\n');
    writeFileSync(join(dir, 'baton.config.json'), config);
    return dir;
  });
  const [a, b] = checkouts.map((dir) => join(dir, 'baton.config.json'));
  const first = await baton(['apply', a ?? '', '--url', api.url, '--token', api.admin]);
  assert.equal(first.code, 0, first.err);
  const before = await api.snapshot();
  const moved = await baton(['apply', b ?? '', '--url', api.url, '--token', api.admin]);
  assert.equal(moved.code, 1, moved.out);
  const held = `file:${join(root, 'relA', 'client.jwk.json')}`;
  const file = `file:${join(root, 'relB', 'client.jwk.json')}`;
  assert.ok(
    moved.err.includes(
      `config_conflict: nothing applied: issuer http://127.0.0.1:9: pinned with another pin (pins are immutable): client.key_ref: ${held} vs ${file}`,
    ),
    moved.err,
  );
  assert.equal(await api.snapshot(), before);
});
