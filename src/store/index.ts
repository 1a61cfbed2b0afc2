// The public surface of src/store (DESIGN.md §2).
export type { EngineKind, SqlExecutor, SqlValue, StoreEngine, Transaction } from './engine.js';
export {
  openSqliteEngine,
  type SqliteEngineOptions,
  type SqliteEngineStats,
  type SqliteStoreEngine,
} from './sqlite.js';
export { openPostgresEngine, type PostgresEngineOptions } from './postgres.js';
export { constraintKind, isUniqueViolation, mapDriverError, type ConstraintKind } from './errors.js';
export { appliedMigrations, migrate, type MigrateResult, type Migration } from './migrations.js';
export {
  appendEvidence,
  evidenceHash,
  listEvidence,
  type AppendedEvent,
  type EvidenceEvent,
  type EvidenceInput,
} from './evidence-log.js';
export {
  verifyEvidence,
  type BrokenLink,
  type ChainReport,
  type EvidenceProgress,
  type RowProgress,
} from './evidence-verify.js';
export {
  checkpointSigningBytes,
  exportEvidence,
  verifyCheckpoint,
  type Checkpoint,
  type CheckpointReport,
  type CheckpointSignature,
  type CheckpointSigner,
  type CheckpointVerifier,
} from './evidence-export.js';
export {
  loadOrCreateDomainKey,
  occurrencesUnitOfWork,
  openOccurrencesOn,
  openOccurrencesOnSqlite,
  type DomainKeyPair,
  type OccurrencesOnSqlite,
  type OccurrencesOptions,
} from './occurrences.js';
export {
  harnessGate,
  missionsUnitOfWork,
  occurrenceSide,
  openHarnessOn,
  type HarnessOnOptions,
} from './missions.js';
export { NO_HARNESS, type MissionGate } from './missions-gate.js';
export { MissionsReaderSql, MissionsRepositorySql } from './missions-repository.js';
export {
  ContinuityStore,
  type ContinuityOptions,
  type FicQuery,
  type ProjectionObserver,
  type ProjectionResult,
} from './observations-service.js';
export {
  ProducerKeys,
  producerSubject,
  type PinnedProducer,
  type PinStatus,
  type UnpinStatus,
} from './observations-producers.js';
export {
  LOCAL_PRODUCER,
  getArtifact,
  putArtifact,
  type InsertResult,
  type StoredRecord,
} from './observations-records.js';
