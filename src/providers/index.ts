// The public surface of src/providers (DESIGN.md §4).
export * from './sandbox/index.js';
export { HttpProviderAdapter, recordSend, type HttpAdapterOptions, type SendResult } from './http-adapter.js';
export { NO_KEYS, staticKeys, type KeyResolver } from './key-resolver.js';
export {
  deployProfile,
  loadProfile,
  profilesDir,
  SANDBOX_PROFILES,
  SHIPPED_PROFILES,
  sandboxDeployment,
  sandboxEntryUrl,
  type Deployment,
  type SandboxProfileName,
  type ShippedProfileName,
} from './profiles.js';
export {
  backoffMs,
  lineageLister,
  Reconciler,
  reconcileOccurrence,
  visitOccurrence,
  type ReconcileProgress,
  type ReconcileReport,
  type OccurrenceReconciled,
  type ReconcilerOptions,
  type ReconcilerService,
} from './reconciler.js';
export {
  acknowledgeAndSettle,
  type AcknowledgedSettled,
  type SettleOptions,
  type SettleService,
} from './settle.js';
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
export {
  CREDENTIAL_ENCODINGS,
  CREDENTIALS_FORMAT,
  credentialOrigins,
  resolveCredentials,
  validateCredentials,
  type CredentialEncoding,
  type CredentialEntry,
  type CredentialOrigins,
  type CredentialReference,
  type CredentialsDocument,
  type CredentialSources,
  type ResolvedSecrets,
} from './credentials.js';
export { applyRead, type ReadFacts, type ReadOutcome } from './declared/read.js';
export { authenticateFetched } from './declared/channel.js';
export {
  credentialCoverage,
  credentialHeader,
  uncoveredCredentials,
  type CredentialCoverage,
  type CredentialHeader,
  type CredentialRefusal,
  type UncoveredCredential,
} from './credential-header.js';
export {
  deliveryObservation,
  readDelivery,
  type DeliveryHeaders,
  type DeliveryInput,
  type DeliveryReading,
} from './declared/webhook.js';
export {
  eventNativeKey,
  readEvent,
  verifyDelivery,
  webhookObservation,
  webhookSource,
  type Delivery,
  type DeliveryFailure,
  type DeliveryVerdict,
  type EventReading,
  type WebhookEvent,
} from './webhook-intake.js';
export {
  deliveryNamedKey,
  deliveryNamedReference,
  interpretDelivery,
  type DeliveryMeaning,
  type DeliveryObserver,
  type NamedKey,
} from './webhook-delivery.js';
export {
  backoffDelayMs,
  MAX_RETRY_AFTER_MS,
  nextAskAt,
  parseRetryAfter,
  seededRandom,
  type BackoffPolicy,
} from './reconcile-schedule.js';
