// The public surface of src/providers (DESIGN.md §4).
export * from './sandbox/index.js';
export { HttpProviderAdapter, recordSend, type HttpAdapterOptions, type SendResult } from './http-adapter.js';
export { NO_KEYS, staticKeys, type KeyResolver } from './key-resolver.js';
export {
  deployProfile,
  loadProfile,
  profilesDir,
  SANDBOX_PROFILES,
  sandboxDeployment,
  sandboxEntryUrl,
  type Deployment,
  type SandboxProfileName,
} from './profiles.js';
export {
  backoffMs,
  lineageLister,
  Reconciler,
  reconcileOccurrence,
  type ReconcileProgress,
  type ReconcileReport,
  type OccurrenceReconciled,
  type ReconcilerOptions,
  type ReconcilerService,
} from './reconciler.js';
export { acknowledgeAndSettle, type AcknowledgedSettled, type SettleService } from './settle.js';
export {
  ACTIVE_KINDS,
  occurrenceIdFromKey,
  recordReading,
  StatusSources,
  webhookReceiver,
  type SourceReading,
  type StatusSourcesOptions,
  type WebhookReceiverOptions,
  type WebhookRecorded,
} from './status-sources/index.js';
