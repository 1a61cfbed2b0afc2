/** Shared fixtures for the harness tests: a bound item, views and pre-verified inputs. */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isBatonError } from '../../src/core/errors.js';
import { formatRfc3339 } from '../../src/core/time.js';
import type { MissionBinding, WorkItemRecord } from '../../src/missions/model.js';
import type { VerifiedMissionSignal, VerifiedMissionStatus } from '../../src/missions/verified.js';

export const ORIGIN = 'https://as.example.com';
export const MISSION = 'msn_8RfX2Lqv9TqMv4z7sA2bN1k0YpEdHc9-';
export const T0 = Date.parse('2026-11-02T08:00:00Z');

/**
 * A `baton.mission-issuer/1` pin of an issuer on loopback port 9 (nothing listens: registration
 * and config tests only), pushing SETs; its client key a relative `file:` reference.
 */
export const LOOPBACK_PUSH_PIN = {
  format: 'baton.mission-issuer/1',
  issuer: 'http://127.0.0.1:9',
  jwks_uri: 'http://127.0.0.1:9/jwks',
  endpoints: { status: 'http://127.0.0.1:9/status' },
  algorithms: ['ES256'],
  client: {
    client_id: 'baton',
    auth_method: 'private_key_jwt',
    key_ref: 'file:client.jwk.json',
    alg: 'ES256',
  },
  audience: 'https://baton.example',
  bounds: { max_stale_seconds: 60 },
  stream: { delivery: 'urn:ietf:rfc:8935' },
};

/**
 * The client key `LOOPBACK_PUSH_PIN` names (`client.jwk.json`) written into `dir`: a private P-256
 * JWK with kid, what a registration's key reference must hold (checked before the pin is stored).
 */
export function writeClientKey(dir: string, name = 'client.jwk.json'): string {
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ ...jwk, kid: 'client-key-1' }));
  return path;
}

export const binding: MissionBinding = {
  mission_id: MISSION,
  mission_origin: ORIGIN,
  stop_policy: 'baton-default@1',
};

export function item(over: Partial<WorkItemRecord> = {}): WorkItemRecord {
  return {
    id: 'wrk_1',
    kind: 'queue_item',
    sessionId: 'sess_agent_42',
    lineage: 'invoice-agent',
    parentId: null,
    binding,
    actionClass: 'consequential_write',
    notBefore: null,
    expiresAt: null,
    retryOf: null,
    idempotencyKey: 'idem-1',
    state: 'queued',
    hold: false,
    handle: null,
    occurrenceId: null,
    claimedGeneration: null,
    matrixDigest: null,
    createdAt: T0,
    updatedAt: T0,
    version: 1,
    ...over,
  };
}

/**
 * What the status verifier (the other half, src/missions/status.ts) outputs after every A3.2
 * check passed. Tests here drive the view with these pre-verified inputs.
 */
export function verifiedStatus(
  state: string,
  at: number,
  over: Partial<VerifiedMissionStatus> = {},
): VerifiedMissionStatus {
  const expires = at + 60_000;
  return {
    source: 'status',
    origin: ORIGIN,
    missionId: MISSION,
    state,
    authorityHash: null,
    expiresAt: formatRfc3339(expires),
    missionExpiry: '2026-12-31T23:59:59Z',
    issuedAt: Math.floor(at / 1000),
    checkedAt: formatRfc3339(at),
    freshUntil: formatRfc3339(state === 'active' ? expires + 30_000 : expires),
    jws: 'eyJ.eyJ.sig',
    jwsDigest: 'sha-256:AAAA',
    kid: 'sa-key-2026-q3',
    jwkThumbprint: 'thumb',
    ...over,
  };
}

/** A pre-verified lifecycle SET (what the SET receiver outputs after A3.4 steps 1–5). */
export function verifiedSignal(
  state: string,
  version: number,
  at: number,
  over: Partial<VerifiedMissionSignal> = {},
): VerifiedMissionSignal {
  return {
    source: 'signal',
    origin: ORIGIN,
    missionId: MISSION,
    state,
    priorState: version === 1 ? null : 'active',
    version,
    committedAt: formatRfc3339(at),
    jti: `set_${version}_${at}`,
    issuedAt: Math.floor(at / 1000),
    expiresAt: Math.floor(at / 1000) + 300,
    digest: `sha-256:d${version}`,
    reason: null,
    ...over,
  };
}

/** The refusal's code, or 'ok' when `p` resolves; anything but a BatonError fails the test. */
export async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    assert.ok(isBatonError(e), String(e));
    return e.code;
  }
  return 'ok';
}
