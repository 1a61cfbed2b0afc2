/**
 * A7 #19: the SDK's ConnectionCache (src/client/connection-cache.ts) in this process, holding real
 * `at+jwt` access tokens from the reference issuer's token endpoint, verified against its JWKS,
 * and asking the harness's own view for the Mission on every use (A3.9). `cache_disabled`
 * decisions go to the harness, which records them as signed Harness Evidence (HAR-17).
 */
import { createRemoteJWKSet } from 'jose';
import { ConnectionCache } from '../../client/connection-cache.js';
import type { CacheKeyParts } from '../../missions/index.js';
import { CLIENT_ASSERTION_TYPE, clientAssertion } from '../../missions/index.js';
import type { CaseDefinition } from './case.js';
import { AUDIENCE, AUTHORITY_SET } from './harness-env.js';
import type { HarnessKit } from './harness-kit.js';

type HarnessCase = CaseDefinition<HarnessKit>;

/** An RFC 9068 access token for the Mission (client_credentials, private_key_jwt). */
async function accessToken(kit: HarnessKit, mission: string): Promise<string> {
  const { pin, clientKey, clock, issuer } = kit.env;
  const body = new URLSearchParams({
    grant_type: 'client_credentials',
    mission,
    resource: AUDIENCE,
    client_assertion_type: CLIENT_ASSERTION_TYPE,
    client_assertion: await clientAssertion(clientKey, pin.client.client_id, pin.issuer, clock.wallMs()),
  });
  const r = await fetch(`${issuer.url}/as/token`, {
    method: 'POST',
    body,
    signal: AbortSignal.timeout(10_000),
  });
  const answer = (await r.json()) as { access_token?: string };
  if (r.status !== 200 || typeof answer.access_token !== 'string')
    throw new Error(`the issuer refused the token (${r.status})`);
  return answer.access_token;
}

function cacheFor(kit: HarnessKit, disabled: Promise<void>[], skewMs = 0): ConnectionCache<string> {
  const { harness, pin, clock } = kit.env;
  return new ConnectionCache<string>({
    key: createRemoteJWKSet(new URL(pin.jwks_uri)),
    issuer: pin.issuer,
    now: () => clock.wallMs() + skewMs,
    // Baton's check (A3.1 without the CAS) on the stored view, for this entry's authority hash.
    check: async (origin, id, hash) => {
      const a = harness.assessView(
        await harness.getView(origin, id),
        'consequential_write',
        hash ?? undefined,
      );
      return a.reason === 'authority_hash_mismatch' ? 'authority_hash_mismatch' : a.verdict;
    },
    onDisabled: (parts, reason) => {
      if (reason === 'mission_not_active' || reason === 'authority_hash_mismatch')
        disabled.push(harness.recordCacheDisabled(parts, reason));
    },
  });
}

async function cacheDisabledReasons(kit: HarnessKit, mission: string): Promise<string[]> {
  const events = await kit.env.harness.events(`mission:${kit.env.pin.issuer}#${mission}`);
  return events
    .filter((x) => x.type === 'harness_evidence')
    .map((x) => x.body as { event_type?: string; reason?: string })
    .filter((b) => b.event_type === 'cache_disabled')
    .map((b) => String(b.reason));
}

export const CACHE_CASES: readonly HarnessCase[] = [
  {
    id: 'HAR-CASE-019',
    title:
      'A7#19 cached connections: narrowed authority misses, another Mission is refused, a bad token is unused',
    requirements: ['HAR-16', 'HAR-17', 'HAR-18', 'HAR-19'],
    inputs: {
      narrow: 'first authority entry only',
      bad: ['typ', 'expired', 'cnf.jkt'],
      // What is shipped: ConnectionCache is in-process only (not exported), and `cache_disabled`
      // evidence is written only by the in-process MissionsService.recordCacheDisabled, wired here
      // by the runner; no HTTP route of `baton serve` reaches it.
      cacheDisabledEvidence:
        'in-process only: the runner wires onDisabled to MissionsService.recordCacheDisabled',
    },
    async run(kit) {
      const m = await kit.mission();
      const other = await kit.mission();
      const checked = await kit.statusCheck(m);
      if (checked.kind !== 'verified') throw new Error('status not verified');
      const disabled: Promise<void>[] = [];
      const cache = cacheFor(kit, disabled);
      const parts: CacheKeyParts = {
        missionId: m,
        missionOrigin: kit.env.pin.issuer,
        audience: AUDIENCE,
        actor: kit.env.pin.client.client_id,
        cnfJkt: null,
        authorityHash: checked.status.authorityHash,
      };
      const token = await accessToken(kit, m);
      let closed = 0;
      cache.put(parts, { connection: 'conn-A', accessToken: token, close: () => void closed++ });
      kit.check('an active Mission’s cached connection is used', (await cache.get(parts)) === 'conn-A');
      // Mission B: its key never hits A's entry, and A's token under B's key is unused.
      const asB = { ...parts, missionId: other, authorityHash: null };
      kit.check('Mission B misses A’s entry', (await cache.get(asB)) === undefined);
      cache.put(asB, { connection: 'conn-A-for-B', accessToken: token });
      kit.check('Mission B using A’s connection is refused', (await cache.get(asB)) === undefined);
      // Bad tokens, the Mission active: a Status JWS (wrong typ), expired, foreign cnf.jkt.
      const bad: [string, CacheKeyParts, string, ConnectionCache<string>][] = [
        ['wrong typ', { ...parts, actor: 'typ' }, checked.status.jws, cache],
        ['expired', { ...parts, actor: 'exp' }, token, cacheFor(kit, disabled, 400_000)],
        ['foreign cnf.jkt', { ...parts, actor: 'jkt', cnfJkt: 'foreign-thumbprint' }, token, cache],
      ];
      for (const [what, p, t, c] of bad) {
        c.put(p, { connection: 'bad', accessToken: t });
        kit.check(`a cached token with ${what} is unused`, (await c.get(p)) === undefined);
      }
      // Narrowed: the old entry is unusable (cache_disabled); the narrowed key misses it.
      const narrowed = await kit.env.issuerAdmin(`/admin/missions/${m}/narrow`, {
        authority_set: [AUTHORITY_SET[0]],
      });
      if (narrowed.status !== 200) throw new Error(`the issuer refused the narrowing (${narrowed.status})`);
      const after = await kit.statusCheck(m);
      const newHash = after.kind === 'verified' ? after.status.authorityHash : null;
      const newParts = { ...parts, authorityHash: newHash };
      kit.check(
        'after narrowing the narrowed key misses the old entry',
        newHash !== parts.authorityHash && (await cache.get(newParts)) === undefined,
      );
      kit.check(
        'the old entry is unusable and closed',
        (await cache.get(parts)) === undefined && closed === 1,
      );
      cache.put(newParts, { connection: 'conn-narrowed', accessToken: await accessToken(kit, m) });
      kit.check(
        'a connection for the narrowed authority is used',
        (await cache.get(newParts)) === 'conn-narrowed',
      );
      await kit.operate(m, 'revoke');
      const revoked = await kit.refusal(cache.get(newParts));
      kit.check(
        `after revocation the cached connection is refused (${revoked})`,
        revoked === 'mission_not_active',
      );
      await Promise.all(disabled);
      const reasons = await cacheDisabledReasons(kit, m);
      kit.check(
        `cache_disabled Harness Evidence for the narrowing and the revocation, in process only (the runner wires onDisabled to MissionsService.recordCacheDisabled; no HTTP route records it) (${reasons.join(', ')})`,
        reasons.includes('authority_hash_mismatch') && reasons.includes('mission_not_active'),
      );
    },
  },
];
