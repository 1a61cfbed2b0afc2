/**
 * The console's shell in a real browser (docs/console.md "Sign-in", "Live updates", "Pages"):
 * Chromium via playwright-core against a real `buildServer` on loopback. A session that ends
 * (signed out elsewhere while the live stream is open; expired while no stream is) brings the
 * console back to sign-in saying so; evidence written before a page's live stream opened is shown
 * once it opens; a failed live stream shows as disconnected; a failed reload
 * drops the rows of the previous query; a server that cannot be reached at load, a proxy's HTML
 * 502 and an overview whose sections fail are said as what they are; bad deep links get the
 * not-found page or an input error; the skip link focuses the page without changing the route;
 * the observations page labels UTC days with UTC dates, even in America/Los_Angeles.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { ManualClock } from '../../src/core/clock.js';
import { DEFAULT_SESSION_TTL_MS } from '../../src/server/sessions.js';
import type { JsonObject } from '../../src/core/json.js';
import { createOccurrence, setupOverHttp, startApi, str, T0, takeover, type Api } from '../server/helpers.js';
import { launch, newPage, skipReason, type Launched } from './browser.js';

const reason = skipReason();
const cleanups: (() => Promise<void>)[] = [];
let launched: Launched | undefined;
let world: { api: Api; clock: ManualClock; credential: string } | undefined;

before(async () => {
  if (reason !== undefined) return;
  const clock = new ManualClock(T0);
  const api = await startApi({ after: (fn: () => Promise<void>) => cleanups.push(fn) } as never, {
    clock,
    continuity: true,
  });
  await setupOverHttp(api);
  const credential = await takeover(api, 'agent-a');
  await createOccurrence(api, credential, 'inv-1');
  await createOccurrence(api, credential, 'inv-2');
  world = { api, clock, credential };
  launched = await launch();
});

after(async () => {
  await launched?.close();
  for (const fn of cleanups.reverse()) await fn();
});

function w(): NonNullable<typeof world> {
  assert.ok(world !== undefined);
  return world;
}

async function open() {
  assert.ok(launched !== undefined);
  return newPage(launched.browser);
}

async function signIn(page: Page, token = w().api.operator): Promise<void> {
  await page.goto(`${w().api.url}/console/`);
  await page.getByLabel('Operator or admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Pages' }).waitFor();
}

const ENDED = 'Your session has ended';

/**
 * From now on, a wait until no API request (the live stream aside) has been in flight for 300 ms:
 * a test that moves the clock must not strand a request the page had already sent.
 */
function apiQuiet(page: Page): () => Promise<void> {
  const inflight = new Set<unknown>();
  const isApi = (url: string): boolean => {
    const path = new URL(url).pathname;
    return path.startsWith('/v1/') && path !== '/v1/events';
  };
  page.on('request', (r) => isApi(r.url()) && inflight.add(r));
  page.on('requestfinished', (r) => inflight.delete(r));
  page.on('requestfailed', (r) => inflight.delete(r));
  return async () => {
    let quietSince = Date.now();
    for (const end = Date.now() + 15_000; Date.now() < end;) {
      if (inflight.size > 0) quietSince = Date.now();
      else if (Date.now() - quietSince >= 300) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`${inflight.size} API request(s) still in flight after 15 s`);
  };
}

if (reason !== undefined) test(reason, { skip: reason }, () => undefined);
else {
  test('a session signed out elsewhere ends the live stream and returns to sign-in, saying so', async () => {
    const { url } = w().api;
    const { context, page, problems } = await open();
    await signIn(page);
    await page.getByRole('link', { name: 'Occurrences', exact: true }).click();
    await page.locator('tbody tr').first().waitFor();
    await page.getByRole('status').filter({ hasText: 'Live updates: on' }).waitFor();
    const cookie = (await context.cookies()).find((c) => c.name === 'baton_session');
    assert.ok(cookie !== undefined);
    const headers = { cookie: `baton_session=${cookie.value}` };
    const me = (await (await fetch(`${url}/v1/session`, { headers })).json()) as { csrfToken: string };
    const ended = await fetch(`${url}/v1/session`, {
      method: 'DELETE',
      headers: { ...headers, 'x-baton-csrf': me.csrfToken },
    });
    assert.equal(ended.status, 200);
    // No click: the stream's `end` event (or its refused retry) is what brings the sign-in back.
    await page.getByRole('status').filter({ hasText: ENDED }).waitFor();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    assert.equal(await page.getByRole('navigation', { name: 'Pages', exact: true }).count(), 0, 'no header');
    assert.equal(await page.locator('tbody tr').count(), 0, 'no stale rows');
    await signIn(page);
    assert.equal(await page.getByText(ENDED).count(), 0, 'a new session says nothing of the old one');
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('an expired session: the next request (401) returns to sign-in, saying so', async () => {
    const { context, page, problems } = await open();
    const quiet = apiQuiet(page);
    await signIn(page);
    await page.getByRole('link', { name: 'Authority budgets' }).click();
    await page.getByRole('heading', { name: 'Authority budgets' }).waitFor();
    // The session expires between requests: one still in flight (the overview re-reads once its
    // live stream opens) would be answered 401 before the click below, which is not this case.
    await quiet();
    w().clock.advance(DEFAULT_SESSION_TTL_MS);
    await page.getByRole('link', { name: 'Lineages' }).click();
    await page.getByRole('status').filter({ hasText: ENDED }).waitFor();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    assert.equal(await page.getByText('unauthenticated').count(), 0, 'no inline 401 left on a page');
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('evidence written while the page loads and its live stream opens is shown once the stream is open', async () => {
    const { api, credential } = w();
    const created = await createOccurrence(api, credential, 'inv-opening');
    const { context, page, problems } = await open();
    await signIn(page);
    // The stream is held back until evidence was written after the page's own read: that
    // evidence is in neither the read nor the stream (which starts at the log's end when it opens).
    let letStreamOpen = (): void => undefined;
    const held = new Promise<void>((resolve) => (letStreamOpen = resolve));
    await page.route('**/v1/events*', async (route) => {
      await held;
      await route.continue();
    });
    await page.evaluate(`location.hash = '#/occurrences/${str(created)}'`);
    await page.getByRole('heading', { name: /^Evidence \(1 events/ }).waitFor();
    const released = await api.call('POST', `/v1/occurrences/${str(created)}/release`, {
      token: credential,
      body: { requestDigest: (created['provider'] as JsonObject)['requestDigest'] as string },
    });
    assert.equal(released.status, 200, released.text);
    letStreamOpen();
    await page.getByRole('status').filter({ hasText: 'Live updates: on' }).waitFor();
    await page.getByRole('heading', { name: /^Evidence \(2 events/ }).waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('a live stream that fails shows as disconnected, not live', async () => {
    const { context, page } = await open();
    await signIn(page);
    await page.route('**/v1/events*', (route) =>
      route.fulfill({ status: 502, contentType: 'text/html', body: '<h1>Bad Gateway</h1>' }),
    );
    await page.getByRole('link', { name: 'Occurrences', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Live updates: disconnected' }).waitFor();
    await page
      .getByText(/^Live updates stopped \((reconnecting|disconnected)\): 0 new evidence events/)
      .waitFor();
    assert.equal(await page.getByText(/^Live: /).count(), 0, 'the list no longer claims to be live');
    assert.ok(
      await page.getByRole('navigation', { name: 'Pages', exact: true }).isVisible(),
      'still signed in',
    );
    await context.close();
  });

  test("a failed reload drops the previous query's rows", async () => {
    const { context, page } = await open();
    await signIn(page);
    await page.getByRole('link', { name: 'Occurrences', exact: true }).click();
    await page.locator('tbody tr').first().waitFor();
    await page.evaluate(`location.hash = '#/occurrences?phase=bogus'`);
    await page.getByRole('alert').filter({ hasText: 'input_invalid' }).waitFor();
    assert.equal(
      await page.locator('tbody tr').count(),
      0,
      'no rows of the unfiltered list beside the error',
    );
    await context.close();
  });

  test('a server unreachable at load: an error and "Try again", not "Loading…" forever', async () => {
    const { context, page, problems } = await open();
    await page.route('**/v1/session', (route) => route.abort('connectionrefused'));
    await page.goto(`${w().api.url}/console/`);
    await page.getByText('The console could not ask the server whether you are signed in').waitFor();
    await page.getByRole('alert').waitFor();
    await page.unroute('**/v1/session');
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    assert.deepEqual(problems, [], 'no uncaught rejection');
    await context.close();
  });

  test('a proxy\'s HTML 502 at sign-in shows the HTTP status, not "undefined: undefined"', async () => {
    const { context, page } = await open();
    await page.goto(`${w().api.url}/console/`);
    await page.route('**/v1/session', (route) =>
      route.request().method() === 'POST'
        ? route.fulfill({
            status: 502,
            contentType: 'text/html',
            body: '<html><h1>502 Bad Gateway</h1></html>',
          })
        : route.continue(),
    );
    await page.getByLabel('Operator or admin token').fill(w().api.operator);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const text = await alert.innerText();
    assert.match(text, /^HTTP 502: /);
    assert.doesNotMatch(text, /undefined/);
    await context.close();
  });

  test('overview sections that failed to load claim nothing ("None yet.", "No refusals…")', async () => {
    const { context, page } = await open();
    await signIn(page);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    for (const p of ['**/v1/evidence/recent*', '**/v1/refusals/histogram*', '**/v1/evidence/histogram*']) {
      await page.route(p, (route) => route.abort('connectionrefused'));
    }
    await page.getByRole('link', { name: 'Lineages' }).click();
    await page.getByRole('heading', { name: 'Lineages' }).first().waitFor();
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { name: 'Recent takeovers' }).waitFor();
    for (let i = 0; i < 200 && (await page.getByRole('alert').count()) < 3; i++)
      await page.waitForTimeout(50);
    assert.equal(await page.getByRole('alert').count(), 3, 'each failed section says so');
    const takeovers = page.locator('section[aria-labelledby="takeovers-h"]');
    assert.equal(await takeovers.getByText('None yet.').count(), 0);
    assert.equal(await page.getByText('No refusals since this server started.').count(), 0);
    assert.equal(await page.getByText('(0 in all)').count(), 0);
    await context.close();
  });

  test('bad deep links: a malformed escape is not found; a garbage time is an input error', async () => {
    const { context, page, problems } = await open();
    await signIn(page);
    await page.goto(`${w().api.url}/console/#/occurrences/%E0%A4%A`);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    await page.goto(`${w().api.url}/console/#/occurrences?from=garbage`);
    await page.getByRole('alert').filter({ hasText: 'input_invalid: from is not a date and time' }).waitFor();
    assert.deepEqual(problems, [], 'no URIError or RangeError');
    await context.close();
  });

  test('the skip link moves focus to the page and keeps the route', async () => {
    const { context, page } = await open();
    await signIn(page);
    await page.goto(`${w().api.url}/console/#/lineages`);
    // A route change inside the console moves focus to the new page's heading (tabs.test.ts);
    // a fresh load starts at the top, where the skip link is the first stop.
    await page.reload();
    await page.getByRole('heading', { name: 'Lineages' }).first().waitFor();
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate('document.activeElement.textContent'), 'Skip to content');
    await page.keyboard.press('Enter');
    await page.waitForFunction(`document.activeElement?.id === 'main'`);
    await page.waitForTimeout(300);
    assert.match(page.url(), /#\/lineages$/);
    await page.getByRole('heading', { name: 'Lineages' }).first().waitFor();
    await context.close();
  });

  test('observations: each UTC day is labelled with its UTC date, also in America/Los_Angeles', async () => {
    assert.ok(launched !== undefined);
    const context = await launched.browser.newContext({ timezoneId: 'America/Los_Angeles', locale: 'en-US' });
    const page = await context.newPage();
    await signIn(page);
    await page.goto(`${w().api.url}/console/#/observations`);
    await page.getByRole('columnheader', { name: 'Day (UTC)' }).waitFor();
    const rows = page.locator('tbody tr');
    await rows.nth(6).waitFor();
    const days = await rows.locator('td:first-child').allInnerTexts();
    const today = await page.evaluate(() => new Date().toISOString().slice(0, 10));
    assert.equal(days[6], today, days.join());
    const dayMs = 86_400_000;
    assert.equal(days[0], new Date(Date.parse(today) - 6 * dayMs).toISOString().slice(0, 10));
    // The reason codes come with words.
    await page.getByText('no occurrence was entered that day (n = 0)').first().waitFor();
    await context.close();
  });
}
