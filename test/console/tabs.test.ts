/**
 * The console across tabs and under load, in a real browser (docs/console.md "Sign-in", "Live
 * updates", "Accessibility"): Chromium via playwright-core against a real `buildServer` on loopback.
 * Signing in as someone else in another tab re-syncs every tab (BroadcastChannel), and a call the
 * server refuses `csrf_invalid` (the cookie names another session now) re-reads who is signed in;
 * a burst of evidence events makes a bounded number of reads; a network failure is said in words;
 * a route change names the page and moves focus to its heading.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { setupOverHttp, startApi, takeover, type Api } from '../server/helpers.js';
import { eventually, launch, newPage, skipReason, type Launched } from './browser.js';

const reason = skipReason();
const cleanups: (() => Promise<void>)[] = [];
let launched: Launched | undefined;
let api: Api | undefined;

before(async () => {
  if (reason !== undefined) return;
  api = await startApi({ after: (fn: () => Promise<void>) => cleanups.push(fn) } as never);
  await setupOverHttp(api);
  launched = await launch();
});

after(async () => {
  await launched?.close();
  for (const fn of cleanups.reverse()) await fn();
});

function ready(): { launched: Launched; api: Api } {
  assert.ok(launched !== undefined && api !== undefined);
  return { launched, api };
}

async function signIn(page: Page, token: string): Promise<void> {
  await page.getByLabel('Operator or admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Pages', exact: true }).waitFor();
}

if (reason !== undefined) test(reason, { skip: reason }, () => undefined);
else {
  test('sign-in and sign-out in one tab reach the other tabs (no stale identity)', async () => {
    const { launched, api } = ready();
    const { context, page: a, problems } = await newPage(launched.browser);
    const b = await context.newPage();
    await a.goto(`${api.url}/console/#/tokens`);
    await b.goto(`${api.url}/console/#/occurrences`);
    await a.getByLabel('Operator or admin token').waitFor();
    await b.getByLabel('Operator or admin token').waitFor();
    await signIn(a, api.admin);
    await a.getByRole('heading', { name: 'Tokens' }).waitFor();
    // Tab B is told (BroadcastChannel) and reads the session the shared cookie names now.
    await b.getByRole('navigation', { name: 'Pages', exact: true }).waitFor();
    assert.match(await b.locator('.who').innerText(), /\(admin\)/);
    // Signing out in B signs A out too, saying why.
    await b.getByRole('button', { name: 'Sign out' }).click();
    await a.getByText('Your session has ended').waitFor();
    // Signing in as the operator in B: A follows, and its admin actions are gone.
    await b.getByLabel('Operator or admin token').waitFor();
    await signIn(b, api.operator);
    await a.getByRole('navigation', { name: 'Pages', exact: true }).waitFor();
    assert.match(await a.locator('.who').innerText(), /\(operator\)/);
    await a.getByText('This page is for admins.').waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('a call refused csrf_invalid (the cookie was replaced) re-reads who is signed in', async () => {
    const { launched, api } = ready();
    const { context, page } = await newPage(launched.browser);
    const spare = await api.call('POST', '/v1/tokens', {
      token: api.admin,
      body: { role: 'operator', name: 'spare-csrf' },
    });
    assert.equal(spare.status, 201, spare.text);
    await page.goto(`${api.url}/console/#/tokens`);
    await signIn(page, api.admin);
    // The cookie is replaced behind the page's back (no BroadcastChannel message): another
    // window of this browser signed in as the operator.
    const other = await api.call('POST', '/v1/session', { body: { token: api.operator } });
    const value = /^baton_session=([^;]+)/.exec(other.headers.get('set-cookie') ?? '')?.[1];
    assert.ok(value !== undefined);
    await context.addCookies([{ name: 'baton_session', value, url: api.url }]);
    await page.getByRole('button', { name: 'Revoke spare-csrf' }).click();
    await page.getByRole('button', { name: 'Confirm revoke' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'Your last action was refused (csrf_invalid)' })
      .waitFor();
    assert.match(await page.locator('.who').innerText(), /\(operator\)/);
    const tokens = await api.call('GET', '/v1/tokens', { token: api.admin });
    const row = (tokens.body['tokens'] as { id: string; revokedAt: number | null }[]).find(
      (t) => t.id === spare.body['id'],
    );
    assert.equal(row?.revokedAt, null, 'refused: not revoked');
    await context.close();
  });

  test('a revoke in flight cannot be confirmed again', async () => {
    const { launched, api } = ready();
    const { context, page } = await newPage(launched.browser);
    const spare = await api.call('POST', '/v1/tokens', {
      token: api.admin,
      body: { role: 'operator', name: 'spare-busy' },
    });
    assert.equal(spare.status, 201, spare.text);
    let deletes = 0;
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    await page.route('**/v1/tokens/*', async (route) => {
      if (route.request().method() !== 'DELETE') return route.continue();
      deletes++;
      await held;
      return route.continue();
    });
    await page.goto(`${api.url}/console/#/tokens`);
    await signIn(page, api.admin);
    await page.getByRole('button', { name: 'Revoke spare-busy' }).click();
    await page.getByRole('button', { name: 'Confirm revoke' }).click();
    const busy = page.getByRole('button', { name: 'Revoking…' });
    await busy.waitFor();
    assert.equal(await busy.isDisabled(), true, 'disabled while in flight');
    // It keeps keyboard focus (aria-disabled, not disabled): focus is not dropped on <body>.
    await eventually(
      () => page.evaluate<string>("document.activeElement?.textContent ?? ''"),
      'Revoking…',
      'focus stays on the busy opener',
    );
    await busy.click({ force: true });
    assert.equal(await page.getByRole('dialog').count(), 0, 'no second confirmation while in flight');
    assert.equal(await page.getByRole('button', { name: 'Revoke spare-busy' }).count(), 0);
    release();
    await eventually(() => page.getByRole('button', { name: 'Revoking…' }).count(), 0, 'settled');
    assert.equal(deletes, 1);
    await context.close();
  });

  test('a burst of evidence events makes a bounded number of reads', async () => {
    const { launched, api } = ready();
    const { context, page, problems } = await newPage(launched.browser);
    await page.goto(`${api.url}/console/`);
    await signIn(page, api.operator);
    await page.getByRole('status').filter({ hasText: 'Live updates: on' }).waitFor();
    await page.waitForTimeout(2000); // the first reads and the one after the stream opened
    const reads = new Map<string, number>();
    page.on('request', (r) => {
      const path = new URL(r.url()).pathname;
      if (r.method() === 'GET' && path.startsWith('/v1/') && path !== '/v1/events') {
        reads.set(path, (reads.get(path) ?? 0) + 1);
      }
    });
    const events = 60;
    const started = Date.now();
    for (let i = 0; i < events; i += 10) {
      await Promise.all(Array.from({ length: 10 }, (_, j) => takeover(api, `storm-${i + j}`)));
    }
    // The last event's reload comes at the latest one throttle gap after the burst.
    const recent = page.getByRole('region', { name: 'Recent takeovers' });
    await recent.getByRole('link', { name: `storm-${events - 1}` }).waitFor();
    await page.waitForTimeout(2000);
    // Each of the overview's seven panels re-reads at most once per 1.5 s of the burst, plus the
    // leading and the trailing read; one read per event would be 60 per panel (420 in all).
    const bound = Math.ceil((Date.now() - started) / 1500) + 2;
    const counts = JSON.stringify(Object.fromEntries(reads));
    assert.equal(reads.size, 7, `every panel re-read after the burst: ${counts}`);
    for (const [path, n] of reads) {
      assert.ok(n <= Math.min(bound, events / 4), `${path}: ${n} reads for ${events} events (${counts})`);
    }
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('a network failure is said in words, not "Failed to fetch"', async () => {
    const { launched, api } = ready();
    const { context, page } = await newPage(launched.browser);
    await page.goto(`${api.url}/console/`);
    await signIn(page, api.admin);
    await page.route('**/v1/tokens', (route) => route.abort('connectionrefused'));
    await page
      .getByRole('navigation', { name: 'Pages', exact: true })
      .getByRole('link', { name: 'Tokens' })
      .click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.equal(await alert.innerText(), 'the server could not be reached (network error or server down)');
    await context.close();
  });

  test('a route change names the page in the title and moves focus to its heading', async () => {
    const { launched, api } = ready();
    const { context, page } = await newPage(launched.browser);
    await page.goto(`${api.url}/console/`);
    await signIn(page, api.operator);
    await eventually(() => page.title(), 'Overview · Baton console', 'the overview is named');
    await page
      .getByRole('navigation', { name: 'Pages', exact: true })
      .getByRole('link', { name: 'Lineages' })
      .click();
    await eventually(() => page.title(), 'Lineages · Baton console', 'the lineages page is named');
    const focused = (): Promise<string> =>
      page.evaluate<string>("document.activeElement?.tagName + ' ' + document.activeElement?.textContent");
    await eventually(focused, 'H1 Lineages', 'focus on the new page heading');
    await page
      .getByRole('navigation', { name: 'Pages', exact: true })
      .getByRole('link', { name: 'Occurrences' })
      .click();
    await eventually(focused, 'H1 Occurrences', 'focus on the next heading');
    // The live counter is no live region: a busy system would announce every event.
    const line = page.getByText(/^(Live:|Connecting to live updates)/);
    await line.waitFor();
    assert.equal(await line.getAttribute('aria-live'), null);
    await context.close();
  });
}
