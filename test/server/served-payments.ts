/**
 * A real Baton server on 127.0.0.1:0 over `engine` with the REAL sandbox provider: domain, the
 * sandbox's profile and the payments authority set up, and an admin token — the setup of a
 * lifecycle driven over HTTP by the SDK (statements.test.ts, ack-future-clock.test.ts).
 */
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { systemClock } from '../../src/core/clock.js';
import { buildServer, Metrics } from '../../src/server/index.js';
import { createToken } from '../../src/server/tokens.js';
import type { StoreEngine } from '../../src/store/engine.js';
import { openOccurrencesOn } from '../../src/store/occurrences.js';
import { AUTHORITY, domainConfig, startSandbox } from '../client/support.js';

export async function servePayments(t: TestContext, engine: StoreEngine, dir: string) {
  t.after(() => engine.close());
  const opened = await openOccurrencesOn(engine, join(dir, 'baton'));
  const p = await startSandbox(t);
  const app = buildServer({
    engine,
    service: opened.service,
    harness: opened.harness,
    metrics: new Metrics(),
    keys: p.keys,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const admin = (await createToken(engine, { role: 'admin' }, { clock: systemClock, actor: 'test' })).token;
  await opened.service.configureDomain(domainConfig() as never);
  await opened.service.registerProfile(JSON.parse(JSON.stringify(p.profile)));
  await opened.service.createAuthority({ id: AUTHORITY, unit: 'EUR-cents', total: 1_000_000 });
  return { opened, p, url, admin };
}
