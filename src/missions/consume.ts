/**
 * The public surface of the Mission consumer side: anchors, Status and SET verification, the issuer
 * pin, key sources and the key archive port, the Status client and its 429/503 back-off, nonces, SET push parsing and the
 * RFC 8936 poller, and the jti replay port (docs/missions.md). The harness (view, machine, store)
 * applies only the VerifiedMissionStatus / VerifiedMissionSignal these produce.
 */
export * from './verified.js';
export * from './anchors.js';
export {
  STATUS_TYP,
  STATUS_MEDIA_TYPE,
  statusBody,
  statusRefusal,
  statusReliance,
  freshUntilMs,
  verifyStatusAnswer,
  verifyStatusJws,
  type RelianceReason,
  type StatusCheck,
  type StatusExpectation,
  type StatusReliance,
} from './status.js';
export * from './signals.js';
export * from './issuer-pin.js';
export * from './registration.js';
export * from './jwks.js';
export * from './nonces.js';
export * from './replay.js';
export * from './status-client.js';
export * from './status-backoff.js';
export * from './ssf-client.js';
export { JWT_SKEW_MS, MAX_COMPACT_BYTES } from './jwt-parts.js';
export { reverifyArchivedStatus } from './archive.js';
