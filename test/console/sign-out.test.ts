/**
 * The console's sign-out in a real browser (docs/console.md "Sign-in"): Chromium via playwright-core
 * against a real `buildServer` on loopback. The console is signed out only once the server ended
 * the session: when `DELETE /v1/session` is refused (here the server's own `403 csrf_invalid`, the
 * request's CSRF header rewritten on its way) or never answers, the console says so and stays
 * signed in, and the session still authenticates; a sign-out the server accepts signs out.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startApi, type Api } from '../server/helpers.js';
import { launch, newPage, skipReason, type Launched } from './browser.js';

const reason = skipReason();
const cleanups: (() => Promise<void>)[] = [];
let launched: Launched | undefined;
let api: Api | undefined;

before(async () => {
  if (reason !== undefined) return;
  api = await startApi({ after: (fn: () => Promise<void>) => cleanups.push(fn) } as never);
  launched = await launch();
});

after(async () => {
  await launched?.close();
  for (const fn of cleanups.reverse()) await fn();
});

if (reason !== undefined) test(reason, { skip: reason }, () => undefined);
else {
  test('a sign-out whose session had already ended (401: signed out in another tab) shows the sign-in form', async () => {
    assert.ok(launched !== undefined && api !== undefined);
    const { url, operator } = api;
    const { context, page } = await newPage(launched.browser);
    // No live stream: its `end` event would bring the sign-in form back before the click
    // (shell.test.ts); here the sign-out's own 401 must.
    await page.route('**/v1/events*', (route) => route.abort('connectionrefused'));
    await page.goto(`${url}/console/`);
    await page.getByLabel('Operator or admin token').fill(operator);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Pages' }).waitFor();
    const cookie = (await context.cookies()).find((c) => c.name === 'baton_session');
    assert.ok(cookie !== undefined);
    // Another tab signs the same session out.
    const headers = { cookie: `baton_session=${cookie.value}` };
    const me = (await (await fetch(`${url}/v1/session`, { headers })).json()) as { csrfToken: string };
    const ended = await fetch(`${url}/v1/session`, {
      method: 'DELETE',
      headers: { ...headers, 'x-baton-csrf': me.csrfToken },
    });
    assert.equal(ended.status, 200);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    assert.equal(await page.getByRole('alert').filter({ hasText: 'Sign-out failed' }).count(), 0);
    await context.close();
  });

  test('a refused or failed sign-out keeps the console signed in and says why', async () => {
    assert.ok(launched !== undefined && api !== undefined);
    const { url, operator } = api;
    const { context, page, problems } = await newPage(launched.browser);
    await page.goto(`${url}/console/`);
    await page.getByLabel('Operator or admin token').fill(operator);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const nav = page.getByRole('navigation', { name: 'Pages' });
    await nav.waitFor();
    const cookie = (await context.cookies()).find((c) => c.name === 'baton_session');
    assert.ok(cookie !== undefined);
    const sessionLives = async (): Promise<boolean> =>
      (await fetch(`${url}/v1/session`, { headers: { cookie: `baton_session=${cookie.value}` } })).ok;

    // The server refuses the sign-out: a wrong CSRF token on the way (403 csrf_invalid).
    await page.route('**/v1/session', (route) =>
      route.request().method() === 'DELETE'
        ? route.continue({ headers: { ...route.request().headers(), 'x-baton-csrf': 'not-the-token' } })
        : route.continue(),
    );
    await page.getByRole('button', { name: 'Sign out' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'Sign-out failed, you are still signed in' });
    await alert.waitFor();
    assert.match(await alert.innerText(), /csrf_invalid/);
    assert.ok(await nav.isVisible(), 'still signed in');
    assert.equal(await page.getByRole('button', { name: 'Sign in' }).count(), 0);
    assert.ok(await sessionLives(), 'the session still authenticates');
    await page.unroute('**/v1/session');

    // The request never gets an answer (the connection fails).
    await page.route('**/v1/session', (route) =>
      route.request().method() === 'DELETE' ? route.abort('connectionreset') : route.continue(),
    );
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('alert').filter({ hasText: 'Sign-out failed, you are still signed in' }).waitFor();
    assert.ok(await nav.isVisible(), 'still signed in');
    assert.ok(await sessionLives(), 'the session still authenticates');
    await page.unroute('**/v1/session');

    // Accepted: signed out, and the session no longer authenticates.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    assert.equal(await sessionLives(), false, 'the session ended');
    assert.deepEqual(problems, []);
    await context.close();
  });
}
