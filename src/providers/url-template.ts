/**
 * Status-source and entry URLs are templates in the profile: `{account}`, `{nativeKey}`,
 * `{reference}` are filled with percent-encoded values before parsing, so a value can never add a
 * path segment, a query or another host.
 */
import { BatonError } from '../core/errors.js';

const PLACEHOLDER = /\{([A-Za-z]+)\}/g;

export function expandUrl(template: string, values: Readonly<Record<string, string | null>>): URL {
  const text = template.replace(PLACEHOLDER, (_m, name: string) => {
    const value = values[name];
    if (value === undefined || value === null) {
      throw new BatonError('status_source_invalid', `the URL template needs {${name}}`, { name });
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
