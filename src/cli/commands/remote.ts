/**
 * Shared plumbing of the commands that talk to a running `baton serve` over the HTTP API
 * (`apply`, `domain`, `profiles`, `authorities`, `missions check`): `--url`/BATON_URL and
 * `--token`/BATON_TOKEN. Their failures exit as every command's do (reportError). The token never
 * appears in an error message.
 */
import { AdminClient } from '../../client/index.js';
import { BatonError } from '../../core/errors.js';

export const DEFAULT_URL = 'http://127.0.0.1:4000';

export const REMOTE_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
} as const;

export const REMOTE_USAGE = `Server: --url URL (or BATON_URL; default ${DEFAULT_URL}) and --token TOKEN (or BATON_TOKEN): an
admin token for the domain, Mission issuer pins, producer pins and tokens, an operator token for profiles and authorities.`;

export function adminClient(values: { url?: string | undefined; token?: string | undefined }): AdminClient {
  const baseUrl = values.url ?? process.env['BATON_URL'] ?? DEFAULT_URL;
  if (!URL.canParse(baseUrl)) throw new BatonError('usage', '--url must be an absolute URL');
  const token = values.token ?? process.env['BATON_TOKEN'];
  if (token === undefined || token === '')
    throw new BatonError('usage', 'a token is needed: --token or BATON_TOKEN');
  return new AdminClient({ baseUrl, token });
}
