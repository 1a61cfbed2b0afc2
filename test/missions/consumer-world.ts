/**
 * A Baton app as `baton serve` builds it (buildServer over openOccurrencesOn, the default Mission
 * consumer) on a real engine, listening on loopback, next to the real reference issuer with a
 * registered client whose private JWK sits in a file the pin's `key_ref` names. The issuer pushes
 * its lifecycle SETs to Baton's RFC 8935 route with the stream bearer Baton has pinned.
 */
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { systemClock, type Clock } from '../../src/core/clock.js';
import type { JsonObject } from '../../src/core/json.js';
import { setClaims, signClaims } from '../../src/issuer/sign.js';
import {
  PUSH_DELIVERY,
  POLL_DELIVERY,
  SET_TYP,
  type IssuerPin,
  type MissionsService,
} from '../../src/missions/index.js';
import type { OccurrencesService } from '../../src/occurrences/index.js';
import type { IssuerOptions } from '../../src/issuer/server.js';
import { buildServer } from '../../src/server/app.js';
import { wireMissionConsumer, type MissionConsumer } from '../../src/server/mission-consumer.js';
import { Metrics } from '../../src/server/metrics.js';
import { createToken } from '../../src/server/tokens.js';
import type { StoreEngine } from '../../src/store/engine.js';
import { verifySubject } from '../../src/store/evidence-verify.js';
import { issuerSubject } from '../../src/store/missions-issuers.js';
import { openOccurrencesOn } from '../../src/store/occurrences.js';
import { domainConfig, paymentsProfile } from '../occurrences/helpers.js';
import { request, type Answer, type CallOptions } from '../server/helpers.js';
import type { EngineUnderTest } from '../store/engines.js';
import { tempDir } from '../store/support.js';
import { AUDIENCE, startWorld, type World } from './issuer-support.js';

export const STREAM_BEARER = 'stream-bearer-0123456789abcdef-0123456789';

export interface ConsumerWorld {
  readonly issuer: World;
  readonly url: string;
  readonly engine: StoreEngine;
  readonly harness: MissionsService;
  readonly service: OccurrencesService;
  readonly metrics: Metrics;
  readonly missions: MissionConsumer;
  /** Baton restarted: a second harness and consumer over the same store (another engine). */
  restarted(): Promise<{ harness: MissionsService; missions: MissionConsumer }>;
  readonly admin: string;
  readonly operator: string;
  readonly pin: IssuerPin;
  readonly dir: string;
  call(method: string, path: string, opts?: CallOptions): Promise<Answer>;
  /** Pin the issuer at Baton (push stream unless `poll`) and register Baton at the issuer. */
  pinIssuer(o?: { poll?: boolean }): Promise<Answer>;
  binding(missionId: string): JsonObject;
}

export interface ConsumerWorldOptions {
  readonly issuer?: IssuerOptions;
  /** One clock for Baton and the issuer (default the system's). */
  readonly clock?: Clock;
  /** The consumer's (and so the harness's) error listener. */
  readonly onError?: (error: unknown, what: string) => void;
}

export async function consumerWorld(
  t: TestContext,
  e: EngineUnderTest,
  o: ConsumerWorldOptions = {},
): Promise<ConsumerWorld> {
  const clock = o.clock ?? systemClock;
  const store = await e.open(t);
  const dir = tempDir(t);
  const opened = await openOccurrencesOn(store.engine, join(dir, 'baton'), { clock });
  await opened.service.configureDomain(domainConfig() as never, 'test');
  await opened.service.registerProfile(paymentsProfile(), 'test');
  await opened.service.createAuthority({ id: 'payouts', unit: 'EUR-cents', total: 100_000 }, 'test');
  const metrics = new Metrics();
  const missions = wireMissionConsumer({
    engine: store.engine,
    harness: opened.harness,
    clock,
    metrics: metrics.missions,
    secretScope: { dirs: [dir] }, // the key and bearer files below
    ...(o.onError !== undefined && { onError: o.onError }),
  });
  const app = buildServer({
    clock,
    engine: store.engine,
    service: opened.service,
    harness: opened.harness,
    metrics,
    missions,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const issuer = await startWorld({ ...o.issuer, ...(o.clock !== undefined && { clock: o.clock }) });
  t.after(async () => {
    await issuer.close();
    await app.close();
  });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const deps = { clock: systemClock, actor: 'test' };
  const admin = (await createToken(store.engine, { role: 'admin' }, deps)).token;
  const operator = (await createToken(store.engine, { role: 'operator' }, deps)).token;
  const keyFile = join(dir, 'client-key.jwk.json');
  writeFileSync(
    keyFile,
    JSON.stringify({ ...issuer.key.privateKey.export({ format: 'jwk' }), kid: issuer.key.kid }),
  );
  const pin: IssuerPin = { ...issuer.pin, client: { ...issuer.pin.client, key_ref: `file:${keyFile}` } };
  const call = (method: string, path: string, opts: CallOptions = {}): Promise<Answer> =>
    request(url, method, path, opts);
  return {
    issuer,
    url,
    engine: store.engine,
    harness: opened.harness,
    service: opened.service,
    metrics,
    missions,
    async restarted() {
      const again = await openOccurrencesOn(store.another(), join(dir, 'baton'), { clock: systemClock });
      const consumer = wireMissionConsumer({
        engine: store.another(),
        harness: again.harness,
        clock: systemClock,
        metrics: new Metrics().missions,
        secretScope: { dirs: [dir] },
      });
      return { harness: again.harness, missions: consumer };
    },
    admin,
    operator,
    pin,
    dir,
    call,
    async pinIssuer(o = {}) {
      const signals = `${url}/v1/missions/signals/${encodeURIComponent(pin.issuer)}`;
      const added = await issuer.admin('/admin/receivers', {
        audience: AUDIENCE,
        delivery: o.poll === true ? 'poll' : 'push',
        ...(o.poll !== true && { endpoint: signals }),
        bearer: STREAM_BEARER,
      });
      if (added.status !== 201)
        throw new Error(`receiver registration failed: ${JSON.stringify(added.body)}`);
      const bearerFile = join(dir, 'poll-bearer');
      writeFileSync(bearerFile, STREAM_BEARER);
      const body =
        o.poll === true
          ? {
              pin: { ...pin, stream: { delivery: POLL_DELIVERY, endpoint: `${issuer.issuer.url}/ssf/poll` } },
              pollBearerRef: `file:${bearerFile}`,
            }
          : { pin: { ...pin, stream: { delivery: PUSH_DELIVERY } }, pushBearer: STREAM_BEARER };
      return call('POST', '/v1/missions/issuers', { token: admin, body });
    },
    binding: (missionId) => ({
      mission_id: missionId,
      mission_origin: pin.issuer,
      stop_policy: 'baton-default@1',
    }),
  };
}

/**
 * The issuer's own SET for transition `version` of `mission` (as its transmitter would send it),
 * signed now on its clock with its current key: a SET a test delivers itself (late, or otherwise).
 */
export async function issuerSet(w: ConsumerWorld, mission: string, version: number): Promise<string> {
  const state = w.issuer.issuer.state;
  const issued = state.missions.get(mission);
  const transition = issued?.history.find((h) => h.version === version);
  if (issued === undefined || transition === undefined) throw new Error(`no transition v${version}`);
  const input = {
    origin: state.origin,
    audience: AUDIENCE,
    mission: issued,
    transition,
    nowMs: state.clock.wallMs(),
    lifetimeSec: 300,
  };
  return signClaims(setClaims(input, undefined), state.keys.current, SET_TYP, undefined);
}

/**
 * The pin stored (201), a Mission approved and its approval SET applied, then suspended at the
 * issuer with its SET dropped: that SET (version 2), for the test to deliver itself.
 */
export async function suspensionSetHeld(w: ConsumerWorld): Promise<{ mission: string; set: string }> {
  const pinned = await w.pinIssuer();
  if (pinned.status !== 201) throw new Error(`pinning answered ${pinned.status}: ${pinned.text}`);
  const mission = await w.issuer.createMission();
  await eventually(
    async () => (await w.harness.getView(w.pin.issuer, mission))?.state === 'active',
    'the approval SET',
  );
  await w.issuer.admin('/admin/faults', { sets: ['drop'] });
  const suspended = await w.issuer.admin(`/admin/missions/${mission}/suspend`, {});
  if (suspended.status !== 200) throw new Error(`suspending answered ${suspended.status}`);
  return { mission, set: await issuerSet(w, mission, 2) };
}

/** Polls `probe` until it returns true (deadline 10 s). */
export async function eventually(probe: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The pinned issuer subject's evidence: its events' types and JCS bodies, and whether its chain verifies. */
export async function issuerEvents(
  w: ConsumerWorld,
): Promise<{ types: string[]; bodies: string[]; ok: boolean }> {
  const subject = issuerSubject(w.pin.issuer);
  const rows = await w.engine.read((ex) =>
    ex.all<{ type: string; body: string }>(
      'SELECT type, body FROM evidence_events WHERE subject = ? ORDER BY seq',
      [subject],
    ),
  );
  const chain = await w.engine.read((ex) => verifySubject(ex, subject));
  return { types: rows.map((r) => r.type), bodies: rows.map((r) => r.body), ok: chain.ok };
}
