/**
 * The request bodies Stripe's API takes: `application/x-www-form-urlencoded` with bracketed
 * nesting (`metadata[invoice]=inv_1`, `expand[0]=latest_charge`). Strict: a repeated parameter,
 * an empty name or a malformed bracket is refused, never merged or guessed at.
 */
export type FormValue = string | FormObject;
export interface FormObject {
  [name: string]: FormValue;
}

export class FormError extends Error {
  override readonly name = 'FormError';
  constructor(
    message: string,
    readonly param: string,
  ) {
    super(message);
  }
}

const SEGMENT = /^([^[\]]+)((?:\[[^[\]]*\])*)$/;

function path(name: string): string[] {
  const m = SEGMENT.exec(name);
  if (m === null) throw new FormError(`Invalid parameter name: ${name.slice(0, 64)}`, name.slice(0, 64));
  const rest = [...m[2]!.matchAll(/\[([^[\]]*)\]/g)].map((x) => x[1]!);
  if (rest.some((s) => s === '')) throw new FormError('Empty brackets are not supported', name.slice(0, 64));
  return [m[1]!, ...rest];
}

function place(target: FormObject, keys: readonly string[], value: string, name: string): void {
  let node = target;
  for (const key of keys.slice(0, -1)) {
    const next = Object.hasOwn(node, key) ? node[key] : undefined;
    if (typeof next === 'string') throw new FormError(`Parameter ${name} conflicts with another`, name);
    node = next ?? (node[key] = Object.create(null) as FormObject);
  }
  const last = keys[keys.length - 1]!;
  if (Object.hasOwn(node, last)) throw new FormError(`Received the parameter ${name} twice`, name);
  node[last] = value;
}

export function parseForm(text: string): FormObject {
  const out = Object.create(null) as FormObject;
  if (text === '') return out;
  for (const pair of text.split('&')) {
    const eq = pair.indexOf('=');
    let name: string;
    let value: string;
    try {
      name = decodeURIComponent((eq < 0 ? pair : pair.slice(0, eq)).replaceAll('+', ' '));
      value = eq < 0 ? '' : decodeURIComponent(pair.slice(eq + 1).replaceAll('+', ' '));
    } catch {
      throw new FormError('Invalid URL encoding in the request body', 'body');
    }
    if (name === '') throw new FormError('Empty parameter name', 'body');
    place(out, path(name), value, name);
  }
  return out;
}
