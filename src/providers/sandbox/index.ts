// The sandbox payments provider's public surface (docs/sandbox.md).
export {
  createSandboxProvider,
  DEFAULT_ACCOUNT,
  type SandboxOptions,
  type SandboxProvider,
} from './server.js';
export {
  DEFAULT_TOLERANCE_MS,
  SANDBOX_ED25519_HEADER,
  SANDBOX_HMAC_HEADER,
  sandboxHeaderName,
  sandboxSignedString,
  signSandboxMessage,
  verifySandboxSignature,
  type SandboxPin,
  type SandboxSignatureFailure,
  type SandboxSigningKey,
  type SandboxVerification,
  type VerifyInput,
} from './signature.js';
export { hmacSecretId, SIGNING_MODES, type SigningMode, type VerificationMaterial } from './keys.js';
export { parseFault, PAYMENT_FAULTS, TRANSPORT_FAULTS, type Fault, type FaultName } from './faults.js';
export { ENVIRONMENT, PAYMENT_STATUSES, type EffectEntry, type PaymentStatus } from './model.js';
export { FAULT_HEADER } from './request.js';
