/**
 * Stripe's error shape: `{"error": {type, code?, message, param?, …}}` with the documented HTTP
 * statuses (400 invalid request, 401 authentication, 402 card errors, 404 missing resources,
 * 409 idempotency conflicts in flight). Messages never echo the API key.
 */
export type StripeErrorType = 'invalid_request_error' | 'idempotency_error' | 'card_error' | 'api_error';

export interface StripeAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly headers?: Record<string, string>;
}

export function stripeError(
  status: number,
  type: StripeErrorType,
  message: string,
  extra: Record<string, unknown> = {},
): StripeAnswer {
  return { status, body: { error: { type, message, ...extra } } };
}

export const invalidParam = (param: string, message: string): StripeAnswer =>
  stripeError(400, 'invalid_request_error', message, { code: 'parameter_invalid', param });

export const missingParam = (param: string): StripeAnswer =>
  stripeError(400, 'invalid_request_error', `Missing required param: ${param}.`, {
    code: 'parameter_missing',
    param,
  });

export const unknownParam = (param: string): StripeAnswer =>
  stripeError(400, 'invalid_request_error', `Received unknown parameter: ${param}`, {
    code: 'parameter_unknown',
    param,
  });

export const resourceMissing = (kind: string, id: string, param: string): StripeAnswer =>
  stripeError(404, 'invalid_request_error', `No such ${kind}: '${id.slice(0, 64)}'`, {
    code: 'resource_missing',
    param,
  });
