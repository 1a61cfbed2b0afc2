// The Stripe-compatible sandbox flavour (docs/sandbox-stripe.md).
export { createStripeSandbox, type StripeSandbox, type StripeSandboxOptions } from './server.js';
export { DECLINED_PAYMENT_METHOD, type StripeEffect } from './model.js';
