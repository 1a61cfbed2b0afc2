/**
 * A PostgreSQL server that vanishes without closing its sockets (a host gone, a network cut) no
 * longer hangs a request forever (docs/store.md, "PostgreSQL": `queryTimeoutMs`): through a
 * loopback proxy that starts swallowing every byte, a read or a COMMIT fails `unavailable` within
 * the timeout — the COMMIT saying its outcome is unknown — its connection is destroyed, and the
 * pool's slot is free again for the next request once the path heals. A pool whose every
 * connection is busy says so, not "cannot connect".
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { isBatonError } from '../../src/core/errors.js';
import { openPostgresEngine, type PostgresEngineOptions } from '../../src/store/postgres.js';
import type { StoreEngine } from '../../src/store/engine.js';
import { postgresForTests } from '../support/postgres.js';
import { gate } from './support.js';

const db = await postgresForTests();

/** A TCP proxy to `target` that forwards, or swallows every byte both ways while `cut`. */
async function proxy(t: TestContext, target: URL): Promise<{ url: string; cut: (on: boolean) => void }> {
  let cut = false;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(from);
      from.on('data', (bytes) => void (cut || to.write(bytes)));
      from.on('error', () => to.destroy());
      from.on('close', () => to.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  const via = new URL(target);
  via.hostname = '127.0.0.1';
  via.port = String((server.address() as AddressInfo).port);
  return { url: via.toString(), cut: (on) => void (cut = on) };
}

function engineOn(t: TestContext, url: string, options: PostgresEngineOptions): StoreEngine {
  const engine = openPostgresEngine(url, { maxConnections: 1, connectionTimeoutMs: 1000, ...options });
  t.after(() => engine.close());
  return engine;
}

const one = (engine: StoreEngine) => engine.read((tx) => tx.get<{ one: number }>('SELECT 1 AS one'));

if (db !== undefined) {
  test(
    'a black-holed read fails unavailable within queryTimeoutMs; the pool slot is freed',
    { timeout: 20_000 },
    async (t) => {
      const path = await proxy(t, new URL(await db.schema()));
      const engine = engineOn(t, path.url, { queryTimeoutMs: 300 });
      assert.deepEqual(await one(engine), { one: 1 });
      path.cut(true);
      const started = performance.now();
      await assert.rejects(one(engine), (error: unknown) => {
        assert.ok(isBatonError(error, 'unavailable'), String(error));
        assert.match(error.message, /did not answer within the query timeout/);
        return true;
      });
      assert.ok(performance.now() - started < 3000, 'within the timeout, not the OS keepalive');
      path.cut(false);
      // One pooled connection: had the hung one kept its slot, this would wait for it and fail.
      assert.deepEqual(await one(engine), { one: 1 });
    },
  );

  test(
    'a black-holed COMMIT fails unavailable with its outcome unknown, never success',
    { timeout: 20_000 },
    async (t) => {
      const path = await proxy(t, new URL(await db.schema()));
      const engine = engineOn(t, path.url, { queryTimeoutMs: 300 });
      const write = engine.transaction(async (tx) => {
        await tx.get('SELECT 1 AS one');
        path.cut(true); // the COMMIT leaves after this resolves, into the hole
        return 'done';
      });
      await assert.rejects(write, (error: unknown) => {
        assert.ok(isBatonError(error, 'unavailable'), String(error));
        assert.match(error.message, /COMMIT .*whether the transaction committed is unknown/);
        assert.deepEqual(error.details, { outcome: 'unknown' });
        return true;
      });
      path.cut(false);
      assert.deepEqual(await one(engine), { one: 1 });
    },
  );

  test(
    'every pooled connection busy: the wait says so, not "cannot connect"',
    { timeout: 20_000 },
    async (t) => {
      const engine = engineOn(t, await db.schema(), { connectionTimeoutMs: 300 });
      const held = gate();
      const holding = engine.read(async (tx) => {
        await tx.get('SELECT 1 AS one');
        await held.wait;
      });
      await assert.rejects(one(engine), (error: unknown) => {
        assert.ok(isBatonError(error, 'unavailable'), String(error));
        assert.match(
          error.message,
          /^no pooled PostgreSQL connection came free within 300 ms: all 1 are in use/,
        );
        return true;
      });
      held.open();
      await holding;
    },
  );
}
