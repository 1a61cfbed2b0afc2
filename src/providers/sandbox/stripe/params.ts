/**
 * Parameter checks for the PaymentIntents and Refunds subset. A refused parameter is answered
 * before the endpoint starts executing, so Stripe's rules save no idempotent result for it.
 */
import type { FormObject, FormValue } from './form.js';
import { invalidParam, missingParam, unknownParam, type StripeAnswer } from './errors.js';

export type Checked<T> = { ok: true; value: T } | { ok: false; answer: StripeAnswer };

const fail = (answer: StripeAnswer): { ok: false; answer: StripeAnswer } => ({ ok: false, answer });

export function onlyKnown(form: FormObject, known: readonly string[]): StripeAnswer | undefined {
  const extra = Object.keys(form).find((k) => !known.includes(k));
  return extra === undefined ? undefined : unknownParam(extra);
}

export function text(form: FormObject, name: string, max = 5000): Checked<string | null> {
  const v = form[name];
  if (v === undefined) return { ok: true, value: null };
  if (typeof v !== 'string' || v.length > max) return fail(invalidParam(name, `Invalid string: ${name}`));
  return { ok: true, value: v };
}

export function amount(form: FormObject, name: string, required: boolean): Checked<number | null> {
  const v = form[name];
  if (v === undefined) return required ? fail(missingParam(name)) : { ok: true, value: null };
  if (typeof v !== 'string' || !/^[1-9][0-9]{0,10}$/.test(v) || Number(v) > 99_999_999) {
    return fail(invalidParam(name, `Invalid integer: ${typeof v === 'string' ? v.slice(0, 32) : name}`));
  }
  return { ok: true, value: Number(v) };
}

/**
 * The ISO 4217 codes Stripe documents as supported presentment currencies
 * (https://docs.stripe.com/currencies). Anything else — a code that does not exist, such as `zzz`
 * — is a 400 `invalid_request_error` on `currency`, as Stripe answers it.
 */
export const SUPPORTED_CURRENCIES: ReadonlySet<string> = new Set(
  (
    'usd aed afn all amd ang aoa ars aud awg azn bam bbd bdt bgn bif bmd bnd bob brl bsd bwp byn bzd ' +
    'cad cdf chf clp cny cop crc cve czk djf dkk dop dzd egp etb eur fjd fkp gbp gel gip gmd gnf gtq ' +
    'gyd hkd hnl htg huf idr ils inr isk jmd jpy kes kgs khr kmf krw kyd kzt lak lbp lkr lrd lsl mad ' +
    'mdl mga mkd mmk mnt mop mur mvr mwk mxn myr mzn nad ngn nio nok npr nzd pab pen pgk php pkr pln ' +
    'pyg qar ron rsd rub rwf sar sbd scr sek sgd shp sle sos srd std szl thb tjs top try ttd twd tzs ' +
    'uah ugx uyu uzs vnd vuv wst xaf xcd xof xpf yer zar zmw'
  ).split(' '),
);

export function currency(form: FormObject): Checked<string> {
  const v = form['currency'];
  if (v === undefined) return fail(missingParam('currency'));
  if (typeof v !== 'string' || !/^[A-Za-z]{3}$/.test(v)) {
    return fail(invalidParam('currency', 'Invalid currency: must be a three-letter ISO code'));
  }
  const code = v.toLowerCase();
  if (!SUPPORTED_CURRENCIES.has(code)) {
    return fail(
      invalidParam('currency', `Invalid currency: ${code}. Stripe does not support this currency.`),
    );
  }
  return { ok: true, value: code };
}

export function flag(form: FormObject, name: string): Checked<boolean> {
  const v = form[name];
  if (v === undefined) return { ok: true, value: false };
  if (v !== 'true' && v !== 'false') return fail(invalidParam(name, `Invalid boolean: ${name}`));
  return { ok: true, value: v === 'true' };
}

/** `metadata[k]=v`: at most 50 keys, keys ≤ 40 and values ≤ 500 characters (Stripe's limits). */
export function metadata(form: FormObject): Checked<Record<string, string>> {
  const v: FormValue | undefined = form['metadata'];
  if (v === undefined || v === '') return { ok: true, value: {} };
  if (typeof v === 'string') return fail(invalidParam('metadata', 'Invalid object: metadata'));
  const out: Record<string, string> = {};
  const entries = Object.entries(v);
  if (entries.length > 50) return fail(invalidParam('metadata', 'Metadata may have at most 50 keys'));
  for (const [key, value] of entries) {
    if (typeof value !== 'string' || key.length > 40 || value.length > 500) {
      return fail(invalidParam(`metadata[${key.slice(0, 40)}]`, 'Invalid metadata value'));
    }
    out[key] = value;
  }
  return { ok: true, value: out };
}
