/**
 * Baton's service in this process on a real PostgreSQL schema, as `baton mcp --postgres` runs it:
 * the domain, the sandbox's pinned profile and the authority set up by this process as `baton
 * serve`'s operator would, and the upstream payments server in front of the sandbox.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { openOccurrencesOn, openPostgresEngine } from '../../src/store/index.js';
import { AUTHORITY, domainConfig, startSandbox } from '../client/support.js';
import { newControl, serveUpstreamHttp } from './upstream-payments.js';

export async function postgresWorld(t: TestContext, url: string, prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const provider = await startSandbox(t);
  const engine = openPostgresEngine(url);
  t.after(() => engine.close());
  const { service } = await openOccurrencesOn(engine, join(dir, 'baton'));
  await service.configureDomain(domainConfig() as never);
  await service.registerProfile(JSON.parse(JSON.stringify(provider.profile)));
  await service.createAuthority({ id: AUTHORITY, unit: 'EUR-cents', total: 100_000 });
  const control = newControl();
  const upstream = await serveUpstreamHttp(provider.sandbox.url, control);
  t.after(() => upstream.close());
  return { dir, provider, service, control, upstream };
}
