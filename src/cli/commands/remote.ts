/**
 * Shared plumbing of the commands that talk to a running `baton serve` over the HTTP API
 * (`apply`, `domain`, `profiles`, `authorities`, `missions check`): `--url`/BATON_URL and
 * `--token`/BATON_TOKEN. Their failures exit as every command's do (reportError). The token never
 * appears in an error message.
 */
import { AdminClient } from '../../client/index.js';
import { BatonError, isBatonError } from '../../core/errors.js';
import { redactUrl } from '../../server/open.js';

export const DEFAULT_URL = 'http://127.0.0.1:4000';

export const REMOTE_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
} as const;

export const REMOTE_USAGE = `Server: --url URL (or BATON_URL; default ${DEFAULT_URL}) and --token TOKEN (or BATON_TOKEN): an
admin token for the domain, Mission issuer pins, producer pins and tokens, an operator token for profiles and authorities.`;

/** The server URL a remote command talks to: --url, else BATON_URL, else the default. */
export function remoteUrl(values: { url?: string | undefined }): string {
  return values.url ?? process.env['BATON_URL'] ?? DEFAULT_URL;
}

/**
 * A bare `HTTP 404` (no Baton problem body: Baton answers its own 404s with one) means the server
 * at the URL is not Baton, or not at that path: said so, naming the URL and the flag, instead of
 * `not_found: HTTP 404`, which reads as "your item is missing". Anything else is returned as is.
 */
export function notBatonThere(error: unknown, values: { url?: string | undefined }): unknown {
  if (!isBatonError(error, 'not_found') || error.message !== 'HTTP 404') return error;
  const url = remoteUrl(values);
  const from = values.url === undefined && process.env['BATON_URL'] !== undefined ? 'BATON_URL' : '--url';
  return new BatonError(
    'not_found',
    `the server at ${redactUrl(url)} does not look like Baton: its /v1 route answered 404 without a Baton error (check ${from})`,
    error.details,
    { cause: error },
  );
}

export function adminClient(values: { url?: string | undefined; token?: string | undefined }): AdminClient {
  const baseUrl = remoteUrl(values);
  const from = values.url === undefined && process.env['BATON_URL'] !== undefined ? 'BATON_URL' : '--url';
  if (!URL.canParse(baseUrl)) throw new BatonError('usage', `${from} must be an absolute URL`);
  // Checked here, in the flag's name, before the client would refuse it as its own `baseUrl`.
  const { protocol } = new URL(baseUrl);
  if (protocol !== 'http:' && protocol !== 'https:')
    throw new BatonError('usage', `${from} must be an http:// or https:// URL, not ${protocol}`);
  const token = values.token ?? process.env['BATON_TOKEN'];
  if (token === undefined || token === '')
    throw new BatonError('usage', 'a token is needed: --token or BATON_TOKEN');
  return new AdminClient({ baseUrl, token });
}
