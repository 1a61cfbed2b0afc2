/**
 * What the operator typed and what a link carries, in a real browser (docs/console.md "Pages"):
 * Chromium via playwright-core against a real `buildServer` on loopback with the real sandbox
 * provider. Filters typed but not applied survive live evidence events, and a navigation resets
 * them to the link's; a time in a filter or a link is RFC 3339 or a strict local date and time
 * (a real calendar date), anything else `input_invalid`; the harness state filter follows the
 * link; the reconcile answer says how many answers were read, not that they were recorded; the
 * authority budgets are paged by cursor; a second `baton_session` cookie is named with what to
 * do; a creation key starting with `occ_` is found.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { ManualClock } from '../../src/core/clock.js';
import type { JsonObject } from '../../src/core/json.js';
import type { EntryTicket, ProviderProfile } from '../../src/occurrences/index.js';
import {
  createSandboxProvider,
  deployProfile,
  HttpProviderAdapter,
  loadProfile,
  NO_KEYS,
  sandboxDeployment,
  sandboxEntryUrl,
  staticKeys,
  type SandboxProvider,
} from '../../src/providers/index.js';
import { setupOverHttp, startApi, str, takeover, type Api } from '../server/helpers.js';
import { eventually, keysShown, launch, signedInPage, skipReason, type Launched } from './browser.js';

const HMAC = Buffer.alloc(32, 7);
/** A creation key that looks like an occurrence id. */
const OCC_KEY = 'occ_invoice-7';
const reason = skipReason();
const cleanups: (() => Promise<void>)[] = [];
let launched: Launched | undefined;

interface World {
  readonly api: Api;
  readonly sandbox: SandboxProvider;
  readonly profile: ProviderProfile;
  readonly clock: ManualClock;
}
let world: World | undefined;

function w(): World {
  assert.ok(world !== undefined);
  return world;
}

async function create(credential: string, key: string): Promise<string> {
  const { api, profile } = w();
  const r = await api.call('POST', '/v1/occurrences', {
    token: credential,
    body: {
      creationKey: key,
      provider: { profileId: profile.id, profileVersion: profile.version },
      request: { amount: 1250, currency: 'eur', payee: 'acme-supplies', invoice: key },
      authority: { id: 'payouts', amount: 1250 },
    },
  });
  assert.equal(r.status, 201, r.text);
  return str(r.body['occurrence'] as JsonObject);
}

/** Created, entered, sent to the sandbox (which applies it); the answer is never recorded. */
async function crashAfterSend(key: string): Promise<string> {
  const { api, profile, sandbox, clock } = w();
  const cred = await takeover(api, `agent-${key}`);
  const id = await create(cred, key);
  const entered = await api.call('POST', `/v1/occurrences/${id}/enter`, { token: cred });
  assert.equal(entered.status, 200, entered.text);
  const adapter = new HttpProviderAdapter(profile, {
    entryUrl: sandboxEntryUrl(sandbox.url),
    keys: NO_KEYS,
    clock,
  });
  await adapter.send(entered.body as unknown as EntryTicket);
  return id;
}

before(async () => {
  if (reason !== undefined) return;
  const clock = new ManualClock(Date.UTC(2026, 11, 1, 9, 30));
  const sandbox = createSandboxProvider({ hmacSecret: HMAC, clock });
  await sandbox.listen(0);
  cleanups.push(() => sandbox.close());
  const secretId = sandboxDeployment(sandbox).hmacSecretId ?? '';
  const ctx = { after: (fn: () => Promise<void>) => cleanups.push(fn) };
  const api = await startApi(ctx as never, { clock, keys: staticKeys({ [secretId]: HMAC }) });
  await setupOverHttp(api);
  const profile = deployProfile(loadProfile('sandbox-payments'), sandboxDeployment(sandbox));
  assert.equal((await api.call('POST', '/v1/profiles', { token: api.operator, body: profile })).status, 200);
  world = { api, sandbox, profile, clock };
  const cred = await takeover(api, 'key-agent');
  await create(cred, OCC_KEY);
  await create(cred, 'plain-key');
  launched = await launch();
});

after(async () => {
  await launched?.close();
  for (const fn of cleanups.reverse()) await fn();
});

async function signedIn(token = w().api.operator) {
  assert.ok(launched !== undefined);
  return signedInPage(launched.browser, w().api.url, token);
}

const hashQuery = (page: Page) => new URLSearchParams(new URL(page.url()).hash.split('?')[1] ?? '');

browserTest(
  'filters typed but not applied survive live evidence events; a navigation resets them',
  async () => {
    const { context, page, problems } = await signedIn();
    await page.goto(`${w().api.url}/console/#/occurrences?profile=sandbox-payments`);
    await page.getByText(/^Live: 0 new evidence events/).waitFor();
    await page.getByLabel('Lineage').fill('key-agent');
    await page.getByLabel('Creation key', { exact: true }).fill('plain-key');
    await page.getByLabel('Phase').selectOption('reserved');
    await page.getByLabel('Created from').fill('2026-12-01T10:00');
    await page.getByLabel('Profile').fill('');
    // Evidence arrives while the operator types: the list re-renders (and re-reads its first page).
    const cred = await takeover(w().api, 'live-agent');
    await create(cred, 'live-1');
    await page.getByText(/^Live: [1-9]\d* new evidence event/).waitFor();
    await page.waitForTimeout(300);
    assert.equal(await page.getByLabel('Lineage').inputValue(), 'key-agent');
    assert.equal(await page.getByLabel('Creation key', { exact: true }).inputValue(), 'plain-key');
    assert.equal(await page.getByLabel('Phase').inputValue(), 'reserved');
    assert.equal(await page.getByLabel('Created from').inputValue(), '2026-12-01T10:00');
    assert.equal(await page.getByLabel('Profile').inputValue(), '', 'a cleared filter stays cleared');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/lineage=key-agent/);
    assert.deepEqual(Object.fromEntries(hashQuery(page)), {
      phase: 'reserved',
      lineage: 'key-agent',
      creationKey: 'plain-key',
      from: '2026-12-01T09:00:00Z',
    });
    await eventually(() => keysShown(page), ['plain-key'], 'the applied filters');
    // Typed again, then a navigation (Back): the fields show the link's values, not the draft.
    await page.getByLabel('Lineage').fill('typed-not-applied');
    await page.goBack();
    await page.waitForURL(/profile=sandbox-payments/);
    await eventually(() => page.getByLabel('Lineage').inputValue(), '', 'the link has no lineage');
    assert.equal(await page.getByLabel('Profile').inputValue(), 'sandbox-payments');
    assert.equal(await page.getByLabel('Created from').inputValue(), '');
    assert.deepEqual(problems, []);
    await context.close();
  },
);

browserTest('a time that is not RFC 3339 or a strict local date and time is input_invalid', async () => {
  const { context, page } = await signedIn();
  const alert = page.getByRole('alert');
  // From a page that asks nothing by itself (the overview reads occurrences too).
  await page.goto(`${w().api.url}/console/#/verify`);
  await page.getByRole('button', { name: 'Run verification' }).waitFor();
  await page.waitForLoadState('networkidle');
  for (const bad of [
    '1',
    'Dec 7',
    'x 2030',
    '2026-02-31T10:00',
    '2026-12-01',
    '2026-12-01T25:00',
    '2026-12-01T10:00:00+25:00',
  ]) {
    let asked = false;
    const watch = (r: { url(): string }) => {
      if (r.url().includes('/v1/occurrences?')) asked = true;
    };
    page.on('request', watch);
    await page.goto(`${w().api.url}/console/#/occurrences?from=${encodeURIComponent(bad)}`);
    await alert.filter({ hasText: `input_invalid: from is not a date and time: ${bad}` }).waitFor();
    page.off('request', watch);
    assert.equal(asked, false, `${bad}: nothing is asked of the API`);
  }
  // RFC 3339 (the links the console writes) and a strict local time (older links) are read.
  for (const [good, sent] of [
    ['2026-12-01T09:30:00Z', '2026-12-01T09:30:00.000Z'],
    ['2026-12-01T10:30:00+01:00', '2026-12-01T09:30:00.000Z'],
    ['2026-12-01T10:30', '2026-12-01T09:30:00.000Z'],
    ['2026-12-01T10:30:15', '2026-12-01T09:30:15.000Z'],
  ] as const) {
    const asked = page.waitForRequest(
      (r) => r.url().includes('/v1/occurrences?') && r.url().includes('from='),
    );
    await page.goto(`${w().api.url}/console/#/occurrences?from=${encodeURIComponent(good)}`);
    assert.equal(new URL((await asked).url()).searchParams.get('from'), sent, good);
    await page.goto(`${w().api.url}/console/#/overview`);
  }
  await context.close();
});

browserTest('the harness state filter follows the link, and the nav link clears it', async () => {
  const { context, page } = await signedIn();
  const select = page.getByLabel('State');
  await page.goto(`${w().api.url}/console/#/harness?state=queued`);
  await eventually(() => select.inputValue(), 'queued', 'from the link');
  let asked = page.waitForRequest((r) => r.url().includes('/v1/harness/items?'));
  await page.goto(`${w().api.url}/console/#/harness?state=done`);
  assert.equal(new URL((await asked).url()).searchParams.get('state'), 'done');
  await eventually(() => select.inputValue(), 'done', 'a later link');
  asked = page.waitForRequest((r) => r.url().includes('/v1/harness/items?'));
  await page.getByRole('link', { name: 'Missions and harness' }).click();
  assert.equal(
    new URL((await asked).url()).searchParams.get('state'),
    null,
    'the nav link asks for every state',
  );
  await eventually(() => select.inputValue(), '', 'the nav link clears it');
  // Choosing a state writes it into the link (a link shared now names it).
  await select.selectOption('paused');
  await page.waitForURL(/state=paused/);
  await context.close();
});

browserTest('a creation key that starts with occ_ is found by the search', async () => {
  const { context, page } = await signedIn();
  await page.goto(`${w().api.url}/console/#/occurrences`);
  await page.getByLabel('Search by occurrence id or creation key').fill(OCC_KEY);
  await page.getByRole('button', { name: 'Find' }).click();
  await page.waitForURL(/creationKey=/);
  assert.equal(hashQuery(page).get('creationKey'), OCC_KEY);
  await eventually(() => keysShown(page), [OCC_KEY], 'the occurrence with that key');
  // An id still opens its page.
  const rows = await w().api.call('GET', `/v1/occurrences?creationKey=plain-key`, {
    token: w().api.operator,
  });
  const id = str((rows.body['occurrences'] as JsonObject[])[0] ?? {});
  await page.getByLabel('Search by occurrence id or creation key').fill(id);
  await page.getByRole('button', { name: 'Find' }).click();
  await page.getByRole('heading', { name: `Occurrence ${id}` }).waitFor();
  await context.close();
});

browserTest('the reconcile answer counts the answers read, and claims no recorded evidence', async () => {
  const id = await crashAfterSend('inv-read');
  w().sandbox.addFault('all', 'unsigned');
  const { context, page } = await signedIn();
  await page.goto(`${w().api.url}/console/#/occurrences/${id}`);
  await page.getByRole('button', { name: 'Reconcile now' }).click();
  await page.getByRole('button', { name: 'Confirm reconcile' }).click();
  await page.getByRole('heading', { name: 'Reconcile answer' }).waitFor();
  const lines = await page.locator('.result ul li').allInnerTexts();
  assert.match(lines[0] ?? '', /^\d+ status answers? read \(asked now\), 0 of them effective\./);
  assert.ok(
    lines.every((l) => !/recorded/.test(l)),
    lines.join(' | '),
  );
  await context.close();
});

browserTest('authority budgets are paged by cursor: every budget can be reached', async () => {
  const { api } = w();
  for (let i = 0; i < 60; i++) {
    const r = await api.call('POST', '/v1/authorities', {
      token: api.operator,
      body: { id: `budget-${String(i).padStart(2, '0')}`, unit: 'EUR-cents', total: 1000 + i },
    });
    assert.equal(r.status, 200, r.text);
  }
  const { context, page } = await signedIn();
  await page.goto(`${api.url}/console/#/authorities`);
  const rows = page.locator('tbody tr th');
  await eventually(() => rows.count(), 50, 'the first page');
  assert.equal(await rows.first().innerText(), 'budget-00');
  const pager = page.getByRole('navigation', { name: 'Pages of authority budgets' });
  await pager.getByRole('button', { name: 'Next page' }).click();
  // 60 budgets and `payouts`: 11 on the second page, the last one `payouts`.
  await eventually(() => rows.count(), 11, 'the second page');
  assert.equal(await rows.last().innerText(), 'payouts');
  assert.equal(await pager.getByRole('button', { name: 'Next page' }).isDisabled(), true, 'the last page');
  await pager.getByRole('button', { name: 'Previous page' }).click();
  await eventually(() => rows.count(), 50, 'the first page again');
  await context.close();
});

browserTest(
  'a second baton_session cookie (another port of the host) is named, with what to do',
  async () => {
    const { context, page } = await signedIn();
    // What any page on another port of 127.0.0.1 can do: a cookie of the same name on /v1.
    const host = new URL(w().api.url).hostname;
    await context.addCookies([{ name: 'baton_session', value: 'x', domain: host, path: '/v1' }]);
    await page.reload();
    const alert = page.getByRole('alert');
    await alert.filter({ hasText: 'http_malformed' }).waitFor();
    const text = await alert.innerText();
    assert.match(text, /two baton_session cookies/);
    assert.match(text, new RegExp(`clear this site's cookies for ${host.replaceAll('.', '\\.')}`));
    assert.match(text, /then reload/);
    // Clearing them, as told, and reloading signs in again from the start.
    await context.clearCookies();
    await page.reload();
    await page.getByLabel('Operator or admin token').waitFor();
    await context.close();
  },
);

/** The browser tests, or (when they cannot run) one visible skipped line in their place. */
function browserTest(name: string, fn: () => Promise<void>): void {
  if (reason === undefined) test(name, fn);
}
if (reason !== undefined) test(reason, { skip: reason }, () => undefined);
