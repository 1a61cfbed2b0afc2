// Webhook signature schemes of real providers (docs/providers.md "Webhook schemes").
export {
  DEFAULT_WEBHOOK_TOLERANCE_MS,
  WEBHOOK_SCHEMES,
  type WebhookScheme,
  type WebhookSignatureFailure,
  type WebhookVerification,
} from './model.js';
export {
  signStripePayload,
  STRIPE_SIGNATURE_HEADER,
  verifyStripeSignature,
  type StripeVerifyInput,
} from './stripe-signature.js';
export {
  signStandardWebhook,
  STANDARD_WEBHOOK_HEADERS,
  standardWebhookKey,
  verifyStandardWebhook,
  type StandardWebhookKey,
  type StandardWebhookVerifyInput,
} from './standard-webhooks.js';
export { WebhookReplayGuard } from './replay.js';
