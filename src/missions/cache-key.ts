/**
 * Cached-connection keys (seed §8.1, HAR-18/19; build spec A3.9): the JCS digest of everything a
 * connection's authority depends on, so another Mission, audience, actor, sender key or a narrowed
 * authority hash never hits the same entry.
 */
import { digestJcs, type Sha256Digest } from '../core/digest.js';

export interface CacheKeyParts {
  readonly missionId: string;
  readonly missionOrigin: string;
  readonly audience: string;
  readonly actor: string;
  readonly cnfJkt: string | null;
  readonly authorityHash: string | null;
}

export function connectionCacheKey(p: CacheKeyParts): Sha256Digest {
  return digestJcs({
    mission_id: p.missionId,
    mission_origin: p.missionOrigin,
    audience: p.audience,
    actor: p.actor,
    cnf_jkt: p.cnfJkt,
    authority_hash: p.authorityHash,
  });
}
