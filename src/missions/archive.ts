/**
 * Re-verification of an archived status answer (A3.2 step 9, MST-06): the compact JWS is checked
 * against the key archived under its (origin, kid) — not the live `jwks_uri`, which no longer lists
 * a rotated-out key — and must be byte-identical to what was archived. Times are not re-checked:
 * an archived answer is evidence of what the issuer signed then, never a current state.
 */
import { digestBytes, digestEquals } from '../core/digest.js';
import { BatonError } from '../core/errors.js';
import { MISSION_JWS_ALGORITHMS, checkCompactSignature } from '../core/jose.js';
import { archivedMissionKeys, type MissionKeyArchive } from './jwks.js';
import { checkHeader, isFailure } from './jwt-parts.js';
import { STATUS_TYP } from './status.js';
import type { VerifiedMissionStatus } from './verified.js';

export async function reverifyArchivedStatus(
  status: VerifiedMissionStatus,
  archive: MissionKeyArchive,
): Promise<void> {
  if (!digestEquals(digestBytes(status.jws), status.jwsDigest)) {
    throw new BatonError('mission_status_invalid', 'archived JWS does not match its digest', {
      step: 9,
      check: 'body',
    });
  }
  const header = checkHeader(status.jws, STATUS_TYP, MISSION_JWS_ALGORITHMS);
  if (isFailure(header) || header.kid !== status.kid) {
    throw new BatonError('mission_status_invalid', 'archived JWS header is not the archived one', {
      step: 9,
      check: 'kid',
    });
  }
  const key = await archivedMissionKeys(archive, status.origin).resolve(header);
  if (key.thumbprint !== status.jwkThumbprint) {
    throw new BatonError('mission_status_invalid', 'archived key is not the one that verified', {
      step: 9,
      check: 'kid',
    });
  }
  if (!(await checkCompactSignature(status.jws, key.key, header.alg))) {
    throw new BatonError('mission_status_invalid', 'archived JWS does not verify', {
      step: 9,
      check: 'signature',
    });
  }
}
