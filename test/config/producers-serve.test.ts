/**
 * Pinned producer keys end to end (OBS-12 ¶25; docs/config.md "producers"), on both engines: a
 * real `baton serve` on 127.0.0.1, records signed with real Ed25519 keys and POSTed over HTTP, the
 * pins made by `baton apply` over the API and by `serve --config` in process. A producer's signed
 * record is refused before its key is pinned, accepted after, refused when signed by another key,
 * and refused again once the pin is removed — all while the server runs, no restart. On
 * PostgreSQL, two servers share one database: a pin applied through one governs the other.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import {
  exportEd25519PublicJwk,
  exportPublicPem,
  generateEd25519KeyPair,
  type Ed25519KeyPair,
} from '../../src/core/ed25519.js';
import type { JsonObject } from '../../src/core/json.js';
import { OBSERVATION_PROFILE, signRecord, type ObservationRecord } from '../../src/observations/index.js';
import { decidedRecord } from '../observations/support.js';
import { domainConfig, request, startApi, type Answer } from '../server/helpers.js';
import { postgresForTests } from '../support/postgres.js';
import { baton, serveInProcess, tempDir, writeConfig } from './support.js';

const pg = await postgresForTests();
const FORMAT = 'baton.config/1';
const DOMAIN = { ...domainConfig(), id: 'prod-eu' };
const ACME = 'urn:example:acme';
const BOOT = 'urn:example:boot';

interface Served {
  readonly url: string;
  readonly admin: string | null;
  readonly err: () => string;
  stop(): Promise<number>;
}

/** `baton serve --json` in process, on port 0, until its JSON line. */
async function serve(t: TestContext, argv: string[]): Promise<Served> {
  const s = await serveInProcess([...argv, '--port', '0', '--json'], (out) => out.includes('\n'));
  t.after(() => s.stop());
  assert.equal(s.exited(), undefined, `serve exited: ${s.err()}`);
  const line = JSON.parse(s.out().split('\n')[0] ?? '') as { url: string; adminToken: string | null };
  return { url: line.url, admin: line.adminToken, err: s.err, stop: s.stop };
}

function signed(key: Ed25519KeyPair, producer: string, id: string): Promise<ObservationRecord> {
  const now = Date.now();
  return signRecord(
    decidedRecord({
      producer,
      record_id: id,
      profile: OBSERVATION_PROFILE,
      audience: `urn:baton:${DOMAIN.id}`,
      issued_at: new Date(now).toISOString(),
      expires_at: new Date(now + 3_600_000).toISOString(),
    }),
    key.privateKey,
  );
}

async function submit(s: Served, token: string, record: ObservationRecord): Promise<Answer> {
  return request(s.url, 'POST', '/v1/continuity/records', {
    token,
    raw: JSON.stringify(record),
    contentType: 'application/baton-continuity-observation+json',
  });
}

function assertNotPinned(a: Answer): void {
  assert.equal(a.status, 400, a.text);
  assert.equal(a.body['code'], 'observation_record_invalid');
  const details = a.body['details'] as JsonObject | undefined;
  assert.deepEqual([details?.['rule'], details?.['path']], ['envelope', '$.producer'], a.text);
}

async function apply(dir: string, s: Served, token: string, producers: unknown[], name: string) {
  const file = writeConfig(dir, { format: FORMAT, producers }, name);
  return baton(['apply', file, '--url', s.url, '--token', token]);
}

interface Store {
  readonly name: string;
  args(dir: string): Promise<string[]>;
}

const stores: Store[] = [
  { name: 'sqlite', args: (dir) => Promise.resolve(['--db', join(dir, 'baton.db')]) },
  ...(pg === undefined
    ? []
    : [
        {
          name: 'postgres',
          args: async (dir: string) => [
            '--postgres',
            await pg.schema(),
            '--domain-key',
            join(dir, 'shared.domain-key.pem'),
          ],
        },
      ]),
];

for (const store of stores) {
  test(`[${store.name}] OBS-12 serve: a producer's signed record is refused before its key is pinned by baton apply, accepted after, refused under another key and after the unpin`, async (t) => {
    const dir = tempDir(t);
    const [acme, mallory, boot] = [
      generateEd25519KeyPair(),
      generateEd25519KeyPair(),
      generateEd25519KeyPair(),
    ];
    writeFileSync(join(dir, 'acme.pub.pem'), exportPublicPem(acme.publicKey));
    // serve --config pins one producer in process (the store target) before it listens.
    const startup = writeConfig(dir, {
      format: FORMAT,
      domain: DOMAIN,
      producers: [{ producer: BOOT, keys: [exportEd25519PublicJwk(boot.publicKey)] }],
    });
    const s = await serve(t, [...(await store.args(dir)), '--config', startup]);
    assert.match(s.err(), new RegExp(`^producer ${BOOT}: created$`, 'm'));
    const admin = s.admin ?? '';
    assert.equal((await submit(s, admin, await signed(boot, BOOT, 'boot-1'))).status, 201);

    const before = await submit(s, admin, await signed(acme, ACME, 'acme-1'));
    assertNotPinned(before);

    const pinned = await apply(
      dir,
      s,
      admin,
      [{ producer: ACME, keys: [{ file: 'acme.pub.pem' }] }],
      'pin.json',
    );
    assert.equal(pinned.code, 0, pinned.err);
    assert.match(pinned.out, new RegExp(`^producer ${ACME}: created$`, 'm'));

    const accepted = await submit(s, admin, await signed(acme, ACME, 'acme-1'));
    assert.equal(accepted.status, 201, accepted.text);
    assert.equal((accepted.body['record'] as JsonObject)['producer'], ACME);
    const forged = await submit(s, admin, await signed(mallory, ACME, 'acme-2'));
    assert.equal(forged.status, 401, forged.text);
    assert.equal(forged.body['code'], 'kid_mismatch');

    const again = await apply(
      dir,
      s,
      admin,
      [{ producer: ACME, keys: [{ file: 'acme.pub.pem' }] }],
      'pin.json',
    );
    assert.match(again.out, /^unchanged: nothing to apply$/m);

    const unpinned = await apply(dir, s, admin, [{ producer: ACME, keys: [] }], 'unpin.json');
    assert.equal(unpinned.code, 0, unpinned.err);
    assert.match(unpinned.out, new RegExp(`^producer ${ACME}: removed$`, 'm'));
    assertNotPinned(await submit(s, admin, await signed(acme, ACME, 'acme-3')));

    const got = await request(s.url, 'GET', `/v1/continuity/records?producer=${ACME}&id=acme-1`, {
      token: admin,
    });
    assert.equal(got.status, 200, 'a record stored under the pin stays');
    assert.equal(await s.stop(), 0);
  });
}

if (pg !== undefined) {
  test('[postgres] two servers, one database: a pin applied through one server governs the other’s next submission', async (t) => {
    const dir = tempDir(t);
    const url = await pg.schema();
    const key = join(dir, 'shared.domain-key.pem');
    const startup = writeConfig(dir, { format: FORMAT, domain: DOMAIN });
    const a = await serve(t, ['--postgres', url, '--domain-key', key, '--config', startup]);
    const b = await serve(t, ['--postgres', url, '--domain-key', key]);
    const admin = a.admin ?? '';
    const acme = generateEd25519KeyPair();
    assertNotPinned(await submit(b, admin, await signed(acme, ACME, 'm-1')));

    const jwk = exportEd25519PublicJwk(acme.publicKey);
    const pinned = await apply(dir, a, admin, [{ producer: ACME, keys: [jwk] }], 'pin.json');
    assert.equal(pinned.code, 0, pinned.err);
    assert.equal((await submit(b, admin, await signed(acme, ACME, 'm-1'))).status, 201);

    const unpinned = await apply(dir, b, admin, [{ producer: ACME, keys: [] }], 'unpin.json');
    assert.match(unpinned.out, new RegExp(`^producer ${ACME}: removed$`, 'm'));
    assertNotPinned(await submit(a, admin, await signed(acme, ACME, 'm-2')));
  });
}

test('a producer key file that holds no Ed25519 public key refuses the whole file (exit 2, config_invalid at its path); nothing is applied', async (t) => {
  const api = await startApi(t, { continuity: true });
  const dir = tempDir(t);
  const acme = generateEd25519KeyPair();
  writeFileSync(join(dir, 'good.pem'), exportPublicPem(acme.publicKey));
  writeFileSync(
    join(dir, 'private.pem'),
    acme.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  );
  writeFileSync(join(dir, 'rsa.json'), JSON.stringify({ kty: 'RSA', n: 'AQAB', e: 'AQAB' }));
  const before = await api.snapshot();
  for (const [file, path] of [
    ['private.pem', '$.producers[0].keys[1].file'],
    ['rsa.json', '$.producers[0].keys[1].file'],
    ['missing.pem', '$.producers[0].keys[1].file'],
  ] as const) {
    const config = writeConfig(dir, {
      format: FORMAT,
      domain: DOMAIN,
      producers: [{ producer: ACME, keys: [{ file: 'good.pem' }, { file }] }],
    });
    const r = await baton(['apply', config, '--url', api.url, '--token', api.admin]);
    assert.equal(r.code, 2, `${file}: ${r.err}`);
    assert.ok(r.err.includes('config_invalid') && r.err.includes(`${path}: `), r.err);
    if (file === 'private.pem') assert.match(r.err, /holds a private key/, 'the slip is named');
  }
  assert.equal(await api.snapshot(), before, 'not even the domain was configured');
});
