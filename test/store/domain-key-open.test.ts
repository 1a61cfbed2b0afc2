/**
 * Opening a store and its domain key, in the order docs/operations.md "Startup" promises: the
 * store is opened and migrated (a newer schema refused) first; a key file is created only for a
 * store whose domain has no key yet; a store whose domain has a key refuses a missing or different
 * key file, naming the path, the key id it expects and how to give the file, and writes nothing.
 * On a real SQLite file and a real PostgreSQL database.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../src/cli/baton.js';
import { exportPrivatePem, generateEd25519KeyPair } from '../../src/core/ed25519.js';
import { isBatonError } from '../../src/core/errors.js';
import { openBaton, type StoreChoice } from '../../src/server/open.js';
import { migrations } from '../../src/store/migrations/index.js';
import { loadOrCreateDomainKey } from '../../src/store/occurrences.js';
import { domainConfig } from '../occurrences/helpers.js';
import { enginesUnderTest, type EngineUnderTest } from './engines.js';
import { captureIo, tempDir } from './support.js';

/** One past the newest migration this Baton knows, as a newer version would have written it. */
const FUTURE_MIGRATION = (migrations.at(-1)?.id ?? 0) + 1;

const engines = await enginesUnderTest();

interface Store {
  readonly dir: string;
  readonly choice: StoreChoice;
  readonly keyFile: string;
  readonly location: string;
  /** The files of the folder, without SQLite's own -wal/-shm companions. */
  files(): string[];
}

async function freshStore(t: TestContext, e: EngineUnderTest): Promise<Store> {
  const store = await e.open(t);
  const dir = tempDir(t);
  const files = (): string[] =>
    readdirSync(dir)
      .filter((f) => !/-(wal|shm)$/.test(f))
      .sort();
  if (e.kind === 'sqlite') {
    const path = join(dir, 'baton.db');
    return {
      dir,
      choice: { kind: 'sqlite', path },
      keyFile: `${path}.domain-key.pem`,
      location: path,
      files,
    };
  }
  const keyFile = join(dir, 'shared.domain-key.pem');
  const choice: StoreChoice = { kind: 'postgres', url: store.location, domainKeyFile: keyFile };
  return { dir, choice, keyFile, location: store.location, files };
}

/** A store whose domain is configured (its key recorded in the database); returns that kid. */
async function configured(store: Store): Promise<string> {
  const opened = await openBaton(store.choice);
  try {
    return (await opened.service.configureDomain(domainConfig() as never)).kid;
  } finally {
    await opened.close();
  }
}

async function cli(argv: string[]): Promise<{ code: number; err: string }> {
  const io = captureIo();
  const code = await main(argv, io);
  return { code, err: io.err.join('') };
}

function storeArgs(store: Store, keyFile = store.keyFile): string[] {
  return store.choice.kind === 'sqlite'
    ? ['--db', store.location]
    : ['--postgres', store.location, '--domain-key', keyFile];
}

for (const e of engines) {
  test(`[${e.name}] a new store: the first open creates the key file (0600), later opens load it`, async (t) => {
    const store = await freshStore(t, e);
    const kid = await configured(store);
    assert.ok(existsSync(store.keyFile));
    assert.equal(statSync(store.keyFile).mode & 0o777, 0o600);
    const pem = readFileSync(store.keyFile, 'utf8');
    const again = await openBaton(store.choice);
    await again.close();
    assert.equal(again.domainKey.kid, kid);
    assert.equal(readFileSync(store.keyFile, 'utf8'), pem, 'the key file is never rewritten');
  });

  test(`[${e.name}] a configured store whose key file is missing is refused, naming path, kid and how to give it; nothing written`, async (t) => {
    const store = await freshStore(t, e);
    const kid = await configured(store);
    // Restored without its key (SQLite), or a mistyped --domain-key (PostgreSQL).
    const missing = store.choice.kind === 'sqlite' ? store.keyFile : join(store.dir, 'other.domain-key.pem');
    if (store.choice.kind === 'sqlite') rmSync(store.keyFile);
    const listing = store.files();
    const choice: StoreChoice =
      store.choice.kind === 'sqlite' ? store.choice : { ...store.choice, domainKeyFile: missing };
    for (const createDomainKey of [true, false]) {
      await assert.rejects(openBaton(choice, { createDomainKey }), (error) => {
        assert.ok(isBatonError(error, 'key_invalid'), String(error));
        assert.ok(error.message.includes(missing), error.message);
        assert.ok(error.message.includes(kid), error.message);
        assert.equal(error.details['kid'], kid);
        if (store.choice.kind === 'postgres')
          assert.match(error.message, /--domain-key FILE \(BATON_DOMAIN_KEY\)/);
        return true;
      });
      assert.deepEqual(store.files(), listing, 'no key file written');
    }
    const r = await cli(['serve', '--port', '0', ...storeArgs(store, missing)]);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, new RegExp(`^error: key_invalid: no domain key file at ${missing}.*${kid}`));
    assert.deepEqual(store.files(), listing, 'serve wrote no key file either');
  });

  test(`[${e.name}] another key's file is refused as domain_conflict naming the expected and the found kid`, async (t) => {
    const store = await freshStore(t, e);
    const kid = await configured(store);
    const other = store.choice.kind === 'sqlite' ? store.keyFile : join(store.dir, 'other.domain-key.pem');
    writeFileSync(other, exportPrivatePem(generateEd25519KeyPair().privateKey), { mode: 0o600 });
    const found = loadOrCreateDomainKey(other.slice(0, -'.domain-key.pem'.length), false).kid;
    const otherPem = readFileSync(other, 'utf8');
    const listing = store.files();
    const choice: StoreChoice =
      store.choice.kind === 'sqlite' ? store.choice : { ...store.choice, domainKeyFile: other };
    await assert.rejects(openBaton(choice), (error) => {
      assert.ok(isBatonError(error, 'domain_conflict'), String(error));
      assert.ok(error.message.includes(kid) && error.message.includes(found), error.message);
      assert.ok(error.message.includes(other), error.message);
      assert.deepEqual([error.details['kid'], error.details['foundKid']], [kid, found]);
      if (store.choice.kind === 'postgres')
        assert.match(error.message, /--domain-key FILE \(BATON_DOMAIN_KEY\)/);
      return true;
    });
    assert.deepEqual(store.files(), listing);
    assert.equal(readFileSync(other, 'utf8'), otherPem, 'the file is left as it was');
  });

  test(`[${e.name}] a store with a newer schema is refused before a key file is written`, async (t) => {
    const store = await freshStore(t, e);
    // Migrate first, then record a migration this Baton does not know (as a newer version would).
    const first = await openBaton(store.choice);
    await first.engine.transaction((tx) =>
      tx.run("INSERT INTO schema_migrations (id, name, digest, applied_at) VALUES (?, 'future', 'x', 0)", [
        FUTURE_MIGRATION,
      ]),
    );
    await first.close();
    rmSync(store.keyFile);
    const listing = store.files();
    await assert.rejects(openBaton(store.choice), (error) => isBatonError(error, 'store_schema_newer'));
    assert.deepEqual(store.files(), listing, 'no key file written');
    assert.equal(existsSync(store.keyFile), false);
  });
}
