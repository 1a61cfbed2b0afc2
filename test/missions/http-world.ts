/**
 * The harness routes served over a test world (test/missions/world.ts) on either engine: the real
 * Fastify app listening on 127.0.0.1 port 0 over the world's store, harness and occurrences
 * service; an operator token made as `baton tokens` makes it; executors by takeover over HTTP.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { buildServer } from '../../src/server/index.js';
import { createToken } from '../../src/server/tokens.js';
import type { EngineUnderTest } from '../store/engines.js';
import { request, type Answer, type CallOptions } from '../server/helpers.js';
import { world, type World } from './world.js';

export interface ServedWorld extends World {
  readonly url: string;
  readonly operator: string;
  call(method: string, path: string, opts?: CallOptions): Promise<Answer>;
  /** An executor credential of `lineage` (a takeover by the operator). */
  takeover(lineage: string): Promise<string>;
  /** Every row of every table of the store, on either engine: equal snapshots mean nothing changed. */
  snapshot(): Promise<string>;
}

export async function servedWorld(t: TestContext, e: EngineUnderTest): Promise<ServedWorld> {
  const w = await world(t, e);
  const app = buildServer({
    engine: w.store.engine,
    service: w.occurrences,
    harness: w.harness,
    clock: w.clock,
    console: false,
  });
  t.after(() => app.close());
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const operator = (
    await createToken(w.store.engine, { role: 'operator' }, { clock: w.clock, actor: 'test' })
  ).token;
  const call = (method: string, path: string, opts: CallOptions = {}) => request(url, method, path, opts);
  return {
    ...w,
    url,
    operator,
    call,
    async takeover(lineage) {
      const r = await call('POST', `/v1/lineages/${lineage}/takeover`, { token: operator });
      assert.equal(r.status, 201, r.text);
      return r.body['credential'] as string;
    },
    async snapshot() {
      const tables = await w.store.tables();
      return w.store.engine.read(async (ex) => {
        const parts: string[] = [];
        for (const name of tables) {
          const rows = (await ex.all(`SELECT * FROM "${name}"`)).map((r) => JSON.stringify(r)).sort();
          parts.push(`${name}:${rows.join(',')}`);
        }
        return parts.join('\n');
      });
    },
  };
}
