/**
 * Your own Stripe client under Baton (issue 13 §5, docs/providers.md "Stripe PaymentIntents"):
 * the user keeps the official `stripe` client they already have and hands `perform` a plain async
 * function. Baton creates the occurrence (the invoice is its creation key), enters it (authority
 * consumed at entry), and calls the function exactly once with the ticket; the function sends the
 * ticket's request under the native key Baton derived — `{ idempotencyKey: ticket.nativeKey }` —
 * so a re-run can never pay twice, and refuses to send when the profile gives no key. What the client returned is kept as unauthenticated evidence; the
 * occurrence is settled by Baton's own status sources under the `stripe-payment-intents` profile
 * (Stripe's events, fetched from the pinned origin with the secret key Baton holds).
 *
 * Label: this example runs against `baton sandbox --flavor stripe`, a Stripe-compatible LOCAL
 * server, with the official client pointed at it (host, port, protocol) — not Stripe's servers.
 */
import Stripe from 'stripe';
// The package's own name, as a project that installed it writes it; inside this repository it
// resolves to the build (dist/) through package.json "exports".
import { BatonError, HttpBatonClient, type PerformResult } from 'baton-aoc/client';

export interface StripeClientOptions {
  /** Baton's URL and an operator token (for the takeover of the example's lineage). */
  readonly batonUrl: string;
  readonly token: string;
  /** Where the Stripe-compatible server listens, and the secret key your client uses. */
  readonly stripe: {
    readonly secretKey: string;
    readonly host: string;
    readonly port: number;
    readonly protocol: 'http' | 'https';
  };
  /** The registered `stripe-payment-intents` profile (its version is pinned to the deployment). */
  readonly profile: { readonly profileId: string; readonly profileVersion: string };
  /** An authority budget in USD-cents. */
  readonly authorityId: string;
}

export interface Payment {
  readonly invoice: string;
  readonly amount: number;
  /** What your client actually sends; a well-behaved caller sends exactly the bound request. */
  readonly send?: Stripe.PaymentIntentCreateParams;
}

/** Pay one invoice through your own client, under a Baton occurrence. */
export async function payInvoice(options: StripeClientOptions, payment: Payment): Promise<PerformResult> {
  const { secretKey, host, port, protocol } = options.stripe;
  const stripe = new Stripe(secretKey, { host, port, protocol });
  const baton = new HttpBatonClient({ baseUrl: options.batonUrl, token: options.token });
  const executor = await baton.takeover('stripe-client-example');
  return executor.perform(
    {
      creationKey: payment.invoice,
      provider: options.profile,
      // The request the occurrence binds (its digest is pinned); the ticket hands it back to send.
      request: {
        amount: payment.amount,
        currency: 'usd',
        confirm: true,
        payment_method: 'pm_card_visa',
        metadata: { invoice: payment.invoice },
      },
      authority: { id: options.authorityId, amount: payment.amount },
    },
    // The plain async function: your client, your call, exactly the request Baton bound (the
    // status sources match the provider's object against its digest), under Baton's native key.
    (ticket) => {
      // Without the key the send would not be idempotent, and a re-run could pay twice: refuse
      // before anything leaves (perform reports adapter_failed; the occurrence stays unresolved).
      if (ticket.nativeKey === null) {
        throw new BatonError('profile_invalid', 'the profile gives no native key: not sending without one');
      }
      const bound = ticket.request as unknown as Stripe.PaymentIntentCreateParams;
      return stripe.paymentIntents.create(payment.send ?? bound, { idempotencyKey: ticket.nativeKey });
    },
  );
}
