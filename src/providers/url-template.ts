/**
 * Status-source and entry URLs are templates in the profile: `{account}`, `{nativeKey}`,
 * `{reference}` are filled with percent-encoded values before parsing, so a value can never add a
 * path segment, a query or another host. Nor can it remove one: `.` and `..` survive
 * percent-encoding and URL parsing would resolve them as dot segments, so such a value is refused
 * (`status_source_invalid`, nothing is fetched) — a provider-supplied reference `..` must never
 * move a credentialed lookup elsewhere on the origin (fail closed, AOC-REQ-009).
 */
import { BatonError } from '../core/errors.js';

const PLACEHOLDER = /\{([A-Za-z]+)\}/g;
/** A value URL parsing would read as a dot segment (a `%` is itself encoded, so `%2e` stays data). */
const DOT_SEGMENT = /^\.{1,2}$/;

export function expandUrl(template: string, values: Readonly<Record<string, string | null>>): URL {
  const text = template.replace(PLACEHOLDER, (_m, name: string) => {
    const value = values[name];
    if (value === undefined || value === null) {
      throw new BatonError('status_source_invalid', `the URL template needs {${name}}`, { name });
    }
    // Empty would drop the segment too (`…/payment_intents/` is another resource).
    if (value === '' || DOT_SEGMENT.test(value)) {
      throw new BatonError('status_source_invalid', `{${name}} cannot be empty, "." or ".."`, {
        name,
        reason: 'dot_segment',
      });
    }
    return encodeURIComponent(value);
  });
  if (!URL.canParse(text)) throw new BatonError('status_source_invalid', 'the URL template is not a URL');
  return new URL(text);
}

/** Whether a template uses a placeholder. */
export function usesPlaceholder(template: string, name: string): boolean {
  return template.includes(`{${name}}`);
}
