/**
 * Console sessions, CSRF, GET /v1/events and the /console static files (issue 14, docs/console.md),
 * against a real server on loopback over real HTTP.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONSOLE_CSP, defaultConsoleDir } from '../../src/console/static.js';
import { DEFAULT_SESSION_TTL_MS } from '../../src/server/sessions.js';
import { assertProblem, setupOverHttp, startApi, takeover, type Api, type Answer } from './helpers.js';

interface Session {
  readonly cookie: string;
  readonly csrf: string;
  readonly answer: Answer;
}

async function signIn(api: Api, token: string): Promise<Session> {
  const answer = await api.call('POST', '/v1/session', { body: { token } });
  assert.equal(answer.status, 201, answer.text);
  const set = answer.headers.get('set-cookie') ?? '';
  const cookie = /^(baton_session=[^;]+)/.exec(set)?.[1];
  assert.ok(cookie !== undefined, set);
  return { cookie, csrf: answer.body['csrfToken'] as string, answer };
}

function withCookie(s: Session, csrf?: string): Record<string, string> {
  return { cookie: s.cookie, ...(csrf !== undefined && { 'x-baton-csrf': csrf }) };
}

test('sign-in: an operator token becomes an HttpOnly, SameSite=Strict cookie with expiry', async (t) => {
  const api = await startApi(t);
  const s = await signIn(api, api.operator);
  const attrs = (s.answer.headers.get('set-cookie') ?? '').split(';').map((a) => a.trim());
  assert.ok(attrs.includes('HttpOnly'));
  assert.ok(attrs.includes('SameSite=Strict'));
  assert.ok(attrs.includes('Path=/'));
  assert.ok(attrs.includes(`Max-Age=${DEFAULT_SESSION_TTL_MS / 1000}`));
  assert.ok(!attrs.includes('Secure'), 'plain http on loopback: not Secure');
  assert.equal(s.answer.body['role'], 'operator');
  assert.equal(s.answer.body['expiresAt'], api.clock.wallMs() + DEFAULT_SESSION_TTL_MS);
  assert.ok(!s.cookie.includes(api.operator.split('.')[2] ?? 'x'), 'the cookie is not the token');
  const counts = await api.call('GET', '/v1/counts', { headers: withCookie(s) });
  assert.equal(counts.status, 200, 'the cookie authenticates a /v1 read');
  const me = await api.call('GET', '/v1/session', { headers: withCookie(s) });
  assert.equal(me.body['csrfToken'], s.csrf, 'the CSRF token is bound to the session');
  const other = await signIn(api, api.operator);
  assert.notEqual(other.csrf, s.csrf, 'each session has its own CSRF token');
});

test('secureCookies (baton serve --secure-cookies, behind a TLS proxy): the session cookie is Secure over plain http, at sign-in and sign-out', async (t) => {
  const api = await startApi(t, { secureCookies: true });
  const s = await signIn(api, api.operator);
  const attrs = (s.answer.headers.get('set-cookie') ?? '').split(';').map((a) => a.trim());
  assert.ok(attrs.includes('Secure'), attrs.join('; '));
  assert.ok(attrs.includes('HttpOnly') && attrs.includes('SameSite=Strict'));
  const out = await api.call('DELETE', '/v1/session', { headers: withCookie(s, s.csrf) });
  assert.equal(out.status, 200, out.text);
  const cleared = (out.headers.get('set-cookie') ?? '').split(';').map((a) => a.trim());
  assert.ok(cleared.includes('Secure') && cleared.includes('Max-Age=0'), cleared.join('; '));
});

test('a state-changing call with the cookie needs the session’s CSRF header; refusals change nothing', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  const s = await signIn(api, api.operator);
  const other = await signIn(api, api.admin);
  for (const csrf of [undefined, 'nope', other.csrf]) {
    const before = await api.snapshot();
    const r = await api.call('POST', '/v1/lineages/csrf-agent/takeover', { headers: withCookie(s, csrf) });
    assertProblem(r, 403, 'csrf_invalid');
    assert.equal(await api.snapshot(), before, 'no state changed');
  }
  const ok = await api.call('POST', '/v1/lineages/csrf-agent/takeover', { headers: withCookie(s, s.csrf) });
  assert.equal(ok.status, 201, ok.text);
  const lineage = await api.call('GET', '/v1/lineages/csrf-agent', { token: api.admin });
  const events = lineage.body['evidence'] as { actor: string }[] | undefined;
  const tokenId = s.answer.body['tokenId'] as string;
  assert.ok(JSON.stringify(events ?? lineage.body).includes(`operator:${tokenId}`), 'acted as the token');
});

test('an executor credential, an unknown and a revoked token cannot sign in', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  const credential = await takeover(api, 'exec-agent');
  const before = await api.snapshot();
  assertProblem(await api.call('POST', '/v1/session', { body: { token: credential } }), 403, 'forbidden');
  const unknown = 'btk.tok_' + 'a'.repeat(32) + '.' + 'B'.repeat(43);
  assertProblem(await api.call('POST', '/v1/session', { body: { token: unknown } }), 401, 'unauthenticated');
  assert.equal(await api.snapshot(), before);
  const made = await api.call('POST', '/v1/tokens', { token: api.admin, body: { role: 'operator' } });
  await api.call('DELETE', `/v1/tokens/${made.body['id'] as string}`, { token: api.admin });
  const revoked = made.body['token'] as string;
  assertProblem(await api.call('POST', '/v1/session', { body: { token: revoked } }), 401, 'unauthenticated');
  const r = await api.call('GET', '/v1/counts', { headers: { cookie: `baton_session=${credential}` } });
  assertProblem(r, 401, 'unauthenticated');
});

test('sign-in with a mistyped, unknown or retired credential is 401 unauthenticated, not a role refusal', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  const retired = await takeover(api, 'exec-agent');
  const live = await takeover(api, 'exec-agent'); // the second takeover retires the first generation
  const before = await api.snapshot();
  const signIn = (token: string): Promise<Answer> => api.call('POST', '/v1/session', { body: { token } });
  for (const token of ['nope', 'x'.repeat(40), retired, 'btk.typo']) {
    const r = await signIn(token);
    assertProblem(r, 401, 'unauthenticated');
    assert.equal(r.headers.get('set-cookie'), null, token);
  }
  assertProblem(await signIn(live), 403, 'forbidden');
  assert.equal(await api.snapshot(), before);
});

test('revoking a token ends its sessions; sign-out ends one; expiry ends it', async (t) => {
  const api = await startApi(t);
  const made = await api.call('POST', '/v1/tokens', { token: api.admin, body: { role: 'operator' } });
  const s = await signIn(api, made.body['token'] as string);
  assert.equal((await api.call('GET', '/v1/counts', { headers: withCookie(s) })).status, 200);
  await api.call('DELETE', `/v1/tokens/${made.body['id'] as string}`, { token: api.admin });
  assertProblem(await api.call('GET', '/v1/counts', { headers: withCookie(s) }), 401, 'unauthenticated');

  const out = await signIn(api, api.operator);
  assertProblem(await api.call('DELETE', '/v1/session', { headers: withCookie(out) }), 403, 'csrf_invalid');
  const bye = await api.call('DELETE', '/v1/session', { headers: withCookie(out, out.csrf) });
  assert.equal(bye.status, 200, bye.text);
  assert.match(bye.headers.get('set-cookie') ?? '', /^baton_session=; .*Max-Age=0/);
  assertProblem(await api.call('GET', '/v1/counts', { headers: withCookie(out) }), 401, 'unauthenticated');

  const late = await signIn(api, api.operator);
  api.clock.advance(DEFAULT_SESSION_TTL_MS - 1);
  assert.equal((await api.call('GET', '/v1/counts', { headers: withCookie(late) })).status, 200);
  api.clock.advance(1);
  assertProblem(await api.call('GET', '/v1/counts', { headers: withCookie(late) }), 401, 'unauthenticated');
});

test('GET /v1/events streams new evidence as server-sent events (authenticated)', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  assertProblem(await api.call('GET', '/v1/events'), 401, 'unauthenticated');
  const s = await signIn(api, api.operator);
  const controller = new AbortController();
  t.after(() => controller.abort());
  const res = await fetch(`${api.url}/v1/events`, { headers: withCookie(s), signal: controller.signal });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  assert.ok(res.body !== null);
  const reader = res.body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  const first = new TextDecoder().decode((await reader.read()).value);
  assert.match(first, /^retry: 2000\n/);
  await takeover(api, 'events-agent');
  let text = '';
  const deadline = Date.now() + 10_000;
  while (!text.includes('lineage:events-agent') && Date.now() < deadline) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += new TextDecoder().decode(chunk.value);
  }
  const event = /id: (\d+)\nevent: evidence\ndata: (.+)\n\n/.exec(text);
  assert.ok(event !== null, text);
  const data = JSON.parse(event[2] ?? '{}') as Record<string, unknown>;
  assert.equal(data['seq'], Number(event[1]));
  assert.equal(data['subject'], 'lineage:events-agent');
  assert.ok(!('body' in data), 'events carry no body');
  controller.abort();
});

test('/console/: strict CSP, no framing, no inline script or style', async (t) => {
  const api = await startApi(t);
  const page = await api.call('GET', '/console/');
  assert.equal(page.headers.get('content-security-policy'), CONSOLE_CSP);
  assert.match(CONSOLE_CSP, /frame-ancestors 'none'/);
  assert.doesNotMatch(CONSOLE_CSP, /unsafe-inline|unsafe-eval/);
  assert.equal(page.headers.get('x-frame-options'), 'DENY');
  const built = existsSync(join(defaultConsoleDir(), 'index.html'));
  if (!built) {
    assert.equal(page.status, 503);
    t.diagnostic('SKIPPED the built-page checks: the console is not built (npm run build)');
    return;
  }
  assert.equal(page.status, 200);
  assert.match(page.type, /^text\/html/);
  const html = readFileSync(join(defaultConsoleDir(), 'index.html'), 'utf8');
  assert.equal(page.text, html);
  for (const tag of html.match(/<script[^>]*>/g) ?? []) assert.match(tag, /\ssrc="\/console\/assets\//);
  assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i, 'no inline style or handler');
  const redirect = await fetch(`${api.url}/console`, { redirect: 'manual' });
  assert.equal(redirect.status, 302);
  assert.equal(redirect.headers.get('location'), '/console/');
  assert.equal((await api.call('GET', '/console/assets/absent.js')).status, 404);
});
