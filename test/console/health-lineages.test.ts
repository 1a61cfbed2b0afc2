/**
 * The console's health panels, refusals chart, lineages list and owner-only actions in a real
 * browser (issue 14 §3; docs/console.md): Chromium via playwright-core against a real
 * `buildServer` on loopback. What the panels show is made over real HTTP first: a webhook
 * delivery for a profile that pins no webhook source (refused, `no_source`), a refused list
 * query, thirty lineages (two pages of 25), one entered and one reserved occurrence. axe-core
 * finds no violation on these pages at 1280×800 and 390×844; screenshots are artifacts.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { JsonObject } from '../../src/core/json.js';
import { createOccurrence, setupOverHttp, startApi, str, takeover, type Api } from '../server/helpers.js';
import {
  axeViolations,
  launch,
  newPage,
  screenshot,
  skipReason,
  VIEWPORTS,
  type Launched,
} from './browser.js';

const reason = skipReason();
const cleanups: (() => Promise<void>)[] = [];
let launched: Launched | undefined;
let world: { api: Api; reserved: JsonObject; entered: JsonObject } | undefined;

before(async () => {
  if (reason !== undefined) return;
  const api = await startApi({ after: (fn: () => Promise<void>) => cleanups.push(fn) } as never);
  await setupOverHttp(api);
  const credential = await takeover(api, 'agent-00');
  for (let i = 1; i < 30; i++) await takeover(api, `agent-${String(i).padStart(2, '0')}`);
  const entered = await createOccurrence(api, credential, 'inv-entered');
  const e = await api.call('POST', `/v1/occurrences/${str(entered)}/enter`, { token: credential });
  assert.equal(e.status, 200, e.text);
  const reserved = await createOccurrence(api, credential, 'inv-reserved');
  const hook = await api.call('POST', '/v1/webhooks/no-such-profile', { body: { id: 'evt_1' } });
  assert.equal(hook.status, 404, hook.text);
  const bad = await api.call('GET', '/v1/occurrences?phase=bogus', { token: api.operator });
  assert.equal(bad.status, 400, bad.text);
  world = { api, reserved, entered };
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

async function open(viewport: { width: number; height: number } = VIEWPORTS.wide) {
  assert.ok(launched !== undefined);
  return newPage(launched.browser, viewport);
}

async function signIn(page: Page, token: string): Promise<void> {
  await page.goto(`${w().api.url}/console/`);
  await page.getByLabel('Operator or admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Pages' }).waitFor();
}

browserTest(
  'overview: reconciler and webhook receiver health, refusals since this server started',
  async () => {
    const { context, page, problems } = await open();
    await signIn(page, w().api.operator);
    const rec = page.locator('section.panel', { has: page.getByRole('heading', { name: 'Reconciler' }) });
    await rec.getByText('No background reconciler runs in this server').waitFor();
    await rec.getByText(/Oldest unresolved occurrence: entered .+ ago\./).waitFor();
    const hooks = page.locator('section.panel', {
      has: page.getByRole('heading', { name: 'Webhook receiver' }),
    });
    await hooks.getByText(/^1 delivery since this server started/).waitFor();
    assert.match(await hooks.locator('li').first().innerText(), /^no_source: 1\s*refused$/);
    const chart = page.locator('figure', { hasText: 'Refusals per 5 minutes' });
    await chart.getByText(/since this server started/).waitFor();
    // The refused list query and the refused delivery (its problem code), both counted.
    const codes = await chart.locator('li').allInnerTexts();
    assert.ok(
      codes.some((c) => c.startsWith('input_invalid: ')),
      codes.join(),
    );
    assert.ok(
      codes.some((c) => c.startsWith('webhook_source_missing: 1')),
      codes.join(),
    );
    assert.ok((await chart.locator('rect.refusal').count()) >= 1, 'a bar for the current bucket');
    await screenshot(page, 'overview-health');
    assert.deepEqual(problems, []);
    await context.close();
  },
);

browserTest('lineages list: pages of 25 by cursor, each linking to its lineage page', async () => {
  const { context, page, problems } = await open();
  await signIn(page, w().api.operator);
  await page.getByRole('link', { name: 'Lineages' }).click();
  await page.getByRole('heading', { name: 'Every lineage' }).waitFor();
  const rows = page.locator('tbody tr');
  await rows.first().waitFor();
  assert.equal(await rows.count(), 25);
  assert.match(await rows.first().innerText(), /^agent-00\s+1\s+0\s/);
  await screenshot(page, 'lineages');
  await page.getByRole('button', { name: 'Next page' }).click();
  await page.getByRole('link', { name: 'agent-29' }).waitFor();
  assert.equal(await rows.count(), 5);
  assert.equal(await page.getByRole('button', { name: 'Next page' }).isDisabled(), true);
  await page.getByRole('button', { name: 'Previous page' }).click();
  await page.getByRole('link', { name: 'agent-00' }).click();
  await page.getByRole('heading', { name: 'agent-00: generation 1' }).waitFor();
  assert.deepEqual(problems, []);
  await context.close();
});

browserTest(
  'occurrence page: release and remedy shown as unavailable, with why and the owner’s call',
  async () => {
    const { context, page, problems } = await open();
    await signIn(page, w().api.admin);
    const o = w().reserved;
    await page.goto(`${w().api.url}/console/#/occurrences/${str(o)}`);
    const release = page.locator('section.unavailable', { hasText: 'Release the reservation' });
    await release
      .getByText(/Only the reservation's owner can release it: the executor of lineage agent-00/)
      .waitFor();
    const digest = (o['provider'] as JsonObject)['requestDigest'] as string;
    assert.ok(
      (await release.locator('pre').innerText()).includes(`executor.release('${str(o)}', '${digest}')`),
    );
    const remedy = page.locator('section.unavailable', { hasText: 'Create a remedy' });
    await remedy.getByText(/its own authority budget and authorization \(AOC-REQ-012\)/).waitFor();
    assert.equal(
      await page.getByRole('button', { name: /release|remedy/i }).count(),
      0,
      'no such button, even for an admin',
    );
    await screenshot(page, 'occurrence-owner-actions');
    await page.goto(`${w().api.url}/console/#/occurrences/${str(w().entered)}`);
    await page.getByText(/Nobody can release it now: .* this occurrence is entered\./).waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  },
);

browserTest(
  'axe-core: no violations on the overview, the lineages list and an occurrence, both viewports',
  async () => {
    for (const [name, viewport] of Object.entries(VIEWPORTS)) {
      const { context, page, problems } = await open(viewport);
      await signIn(page, w().api.operator);
      for (const p of ['overview', 'lineages', `occurrences/${str(w().reserved)}`]) {
        await page.goto(`${w().api.url}/console/#/${p}`);
        await page.locator('main h1').first().waitFor();
        await page.locator('main h2').first().waitFor();
        await page.waitForLoadState('networkidle').catch(() => undefined);
        await page.waitForTimeout(300);
        assert.deepEqual(await axeViolations(page), [], `${p} at ${name}`);
        const wider = await page.evaluate<string[]>(
          `[...document.querySelectorAll('body *')].filter((e) => !e.closest('.scroll') && e.getBoundingClientRect().right > innerWidth + 1).map((e) => e.tagName + '.' + e.className).slice(0, 5)`,
        );
        assert.deepEqual(wider, [], `${p} fits the ${name} viewport without horizontal scrolling`);
        await screenshot(page, `${p.split('/')[0] ?? p}-health-${name}`);
      }
      assert.deepEqual(problems, []);
      await context.close();
    }
  },
);

/** The browser tests, or (when they cannot run) one visible skipped line in their place. */
function browserTest(name: string, fn: () => Promise<void>): void {
  if (reason === undefined) test(name, fn);
}
if (reason !== undefined) test(reason, { skip: reason }, () => undefined);
