/**
 * What a registered secret reference may reach (docs/missions.md "Secret references"): the
 * server's host decides, not the API caller — `env:BATON_SECRET_*`, and files inside the folders
 * `baton serve --secret-dir` lists. Otherwise an admin token could have any host variable or
 * readable file resolved and, as a poll stream's bearer, sent to an endpoint of its choosing.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli/baton.js';
import { isBatonError } from '../../src/core/errors.js';
import { readIssuerRegistration } from '../../src/missions/index.js';
import { openBaton } from '../../src/server/open.js';
import { scopedSecretResolver, secretRefAllowed } from '../../src/server/mission-secrets.js';
import { serveInProcess } from '../config/support.js';
import { LOOPBACK_PUSH_PIN, writeClientKey } from './fixtures.js';
import { assertProblem } from '../server/helpers.js';
import { IssuerRegistry } from '../../src/store/missions-issuers.js';
import { enginesUnderTest } from '../store/engines.js';
import { captureIo, tempDir } from '../store/support.js';
import { spawnNode } from '../support/child.js';
import { repoRoot } from '../support/paths.js';
import { consumerWorld, STREAM_BEARER } from './consumer-world.js';

const cli = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

function refusedAsOutside(f: () => unknown): void {
  assert.throws(
    f,
    (e: unknown) => isBatonError(e, 'key_invalid') && /outside what this server allows/.test(e.message),
  );
}

test('the scoped resolver reads env:BATON_SECRET_* and files inside --secret-dir, refuses everything else', (t) => {
  const root = tempDir(t);
  const allowed = join(root, 'secrets');
  mkdirSync(allowed);
  writeFileSync(join(allowed, 'bearer'), 'inside-the-folder\n');
  writeFileSync(join(allowed, '..dotted'), 'a name that starts with two dots');
  writeFileSync(join(root, 'elsewhere'), 'outside-the-folder');
  symlinkSync(join(root, 'elsewhere'), join(allowed, 'link-out'));
  const resolve = scopedSecretResolver({ dirs: [allowed] });
  process.env['BATON_SECRET_TEST_SCOPE'] = 'from-the-environment';
  process.env['NOT_BATON_SECRET_SCOPE'] = 'a host secret';
  t.after(() => {
    delete process.env['BATON_SECRET_TEST_SCOPE'];
    delete process.env['NOT_BATON_SECRET_SCOPE'];
  });
  assert.equal(resolve('env:BATON_SECRET_TEST_SCOPE'), 'from-the-environment');
  assert.equal(resolve(`file:${join(allowed, 'bearer')}`), 'inside-the-folder');
  assert.equal(resolve(`file:${join(allowed, '..dotted')}`), 'a name that starts with two dots');
  refusedAsOutside(() => resolve('env:NOT_BATON_SECRET_SCOPE'));
  refusedAsOutside(() => resolve(`file:${join(root, 'elsewhere')}`));
  refusedAsOutside(() => resolve(`file:${join(allowed, '..', 'elsewhere')}`));
  refusedAsOutside(() => resolve(`file:${join(allowed, 'link-out')}`)); // a symlink leading out
  refusedAsOutside(() => resolve(`file:${allowed}`)); // the folder itself
  refusedAsOutside(() => resolve('file:secrets/bearer')); // relative: whose working folder?
  // No --secret-dir: no file at all; the prefix alone for variables.
  refusedAsOutside(() => scopedSecretResolver({ dirs: [] })(`file:${join(allowed, 'bearer')}`));
  assert.equal(secretRefAllowed('env:BATON_SECRET_X', { dirs: [] }), true);
  assert.equal(secretRefAllowed('env:BATON_POSTGRES_URL', { dirs: [] }), false);
});

for (const e of await enginesUnderTest()) {
  test(`[${e.name}] POST /v1/missions/issuers refuses references outside the host's scope, and stores nothing`, async (t) => {
    const w = await consumerWorld(t, e); // its scope: the world's own folder only
    const push = { pin: { ...w.pin, stream: { delivery: 'urn:ietf:rfc:8935' } }, pushBearer: STREAM_BEARER };
    const outsideKey = {
      ...push,
      pin: { ...push.pin, client: { ...w.pin.client, key_ref: 'file:/etc/hostname' } },
    };
    const envKey = {
      ...push,
      pin: { ...push.pin, client: { ...w.pin.client, key_ref: 'env:BATON_POSTGRES_URL' } },
    };
    const poll = {
      pin: {
        ...w.pin,
        stream: { delivery: 'urn:ietf:rfc:8936', endpoint: `${w.issuer.issuer.url}/ssf/poll` },
      },
      pollBearerRef: 'env:HOME',
    };
    for (const [what, body, path] of [
      ['a key file outside', outsideKey, '$.pin.client.key_ref'],
      ['a key in an unprefixed variable', envKey, '$.pin.client.key_ref'],
      ['a poll bearer in an unprefixed variable', poll, '$.pollBearerRef'],
    ] as const) {
      const r = await w.call('POST', '/v1/missions/issuers', { token: w.admin, body });
      assertProblem(r, 400, 'input_invalid');
      assert.match(r.text, /outside what this server allows/, what);
      assert.ok(r.text.includes(path), `${what}: names ${path}`);
    }
    const listed = await w.call('GET', '/v1/missions/issuers', { token: w.operator });
    assert.deepEqual(listed.body['issuers'], [], 'nothing pinned');
    assert.equal((await w.pinIssuer()).status, 201, 'the same pin with its key inside the scope is taken');
  });
}

/** A pin whose client key is a host file no --secret-dir holds. */
const PIN = { ...LOOPBACK_PUSH_PIN, client: { ...LOOPBACK_PUSH_PIN.client, key_ref: 'file:/etc/hostname' } };

test('baton serve: --secret-dir must be a folder (exit 2, nothing opened); an issuer pinned outside the scope is named at start', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'baton.db');
  const io = captureIo();
  const code = await main(['serve', '--db', db, '--port', '0', '--secret-dir', join(dir, 'nowhere')], io);
  assert.equal(code, 2);
  assert.match(io.err.join(''), /usage: --secret-dir .*nowhere: not a folder/);
  assert.equal(existsSync(db), false, 'refused before the store was opened');

  // A pin stored before the scope existed (the registry itself, as an older build would have).
  const opened = await openBaton({ kind: 'sqlite', path: db });
  await new IssuerRegistry(opened.engine).register(
    readIssuerRegistration({ pin: PIN, pushBearer: 'a-push-bearer-of-at-least-32-characters' }),
    'test',
    Date.now(),
  );
  await opened.close();
  const child = spawnNode('baton serve', [cli, 'serve', '--db', db, '--port', '0', '--secret-dir', dir], {
    cwd: repoRoot,
    env: { ...process.env, BATON_LOG_LEVEL: 'silent' },
  });
  t.after(() => child.kill());
  await child.waitFor('listening', (l) => (l.startsWith('baton listening on ') ? l : undefined));
  assert.match(
    child.stderr(),
    /mission issuer http:\/\/127\.0\.0\.1:9: pin\.client\.key_ref: the secret reference file:\/etc\/hostname is outside what this server allows.*; it is never read/,
  );
});

test('baton serve --config: an issuer whose key is outside --secret-dir refuses the file (exit 2) before the store is opened', async (t) => {
  const dir = tempDir(t);
  const pin = LOOPBACK_PUSH_PIN; // its key relative to the config's folder
  writeFileSync(join(dir, 'bearer.txt'), 'a-push-bearer-of-at-least-32-characters\n');
  writeClientKey(dir); // the key the pin names: serve --config checks it before pinning
  const config = join(dir, 'baton.config.json');
  writeFileSync(
    config,
    JSON.stringify({ format: 'baton.config/1', issuers: [{ pin, pushBearerRef: 'file:bearer.txt' }] }),
  );
  const db = join(dir, 'baton.db');
  const io = captureIo();
  const code = await main(['serve', '--db', db, '--port', '0', '--config', config], io);
  assert.equal(code, 2, io.err.join(''));
  assert.match(
    io.err.join(''),
    /config_invalid: \$\.issuers\[0\]\.pin\.client\.key_ref: the secret reference file:.*client\.jwk\.json is outside what this server allows/,
  );
  assert.equal(existsSync(db), false, 'refused before the store was opened');
  // The config's folder given: the same file starts the server and pins the issuer.
  const s = await serveInProcess(
    ['--db', db, '--port', '0', '--config', config, '--secret-dir', dir],
    (out) => out.includes('baton listening on '),
  );
  t.after(() => s.stop());
  assert.equal(s.exited(), undefined, s.err());
  assert.match(s.err(), /issuer http:\/\/127\.0\.0\.1:9: created/);
});
