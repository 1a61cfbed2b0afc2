/**
 * The console's page state in a real browser (docs/console.md): Chromium via playwright-core
 * against a real `buildServer` on loopback with the real sandbox provider. A list's cursor belongs
 * to the query it was issued under (a search or a filter change after Next page starts at the
 * first page); an occurrence's or a work item's page keeps nothing of the one seen before (answer,
 * open confirmation, evidence page); a confirmation step takes keyboard focus and gives it back on
 * Escape; "Reconcile now" is offered only on an unresolved occurrence, and its answer is in words;
 * a route changed while the signed-in pages first render is followed.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { JsonObject } from '../../src/core/json.js';
import { ManualClock } from '../../src/core/clock.js';
import type { EntryTicket } from '../../src/occurrences/index.js';
import { workSubject } from '../../src/missions/index.js';
import { appendEvidence } from '../../src/store/evidence-log.js';
import { binding } from '../missions/fixtures.js';
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
import type { ProviderProfile } from '../../src/occurrences/index.js';
import { setupOverHttp, startApi, str, takeover, type Api } from '../server/helpers.js';
import {
  axeViolations,
  eventually,
  keysShown,
  launch,
  newPage,
  signedInPage,
  skipReason,
  type Launched,
} from './browser.js';

const HMAC = Buffer.alloc(32, 7);
const PAGED = 30;
const UNRESOLVED = ['inv-a', 'inv-b', 'inv-c', 'inv-d'];
/** Every occurrence: two pages of 25. */
const TOTAL = PAGED + UNRESOLVED.length;
const reason = skipReason();
const cleanups: (() => Promise<void>)[] = [];
let launched: Launched | undefined;

interface World {
  readonly api: Api;
  readonly sandbox: SandboxProvider;
  readonly profile: ProviderProfile;
  readonly clock: ManualClock;
  /** Entered, sent, never acknowledged: unresolved (the crash after send). */
  readonly unresolved: { id: string; key: string }[];
  /** Reserved, never entered. */
  readonly reserved: string[];
}
let world: World | undefined;

function w(): World {
  assert.ok(world !== undefined);
  return world;
}

function body(creationKey: string, profile: ProviderProfile): JsonObject {
  return {
    creationKey,
    provider: { profileId: profile.id, profileVersion: profile.version },
    request: { amount: 1250, currency: 'eur', payee: 'acme-supplies', invoice: creationKey },
    authority: { id: 'payouts', amount: 1250 },
  };
}

async function create(api: Api, credential: string, key: string, profile: ProviderProfile) {
  const r = await api.call('POST', '/v1/occurrences', { token: credential, body: body(key, profile) });
  assert.equal(r.status, 201, r.text);
  return str(r.body['occurrence'] as JsonObject);
}

/** Created, entered, sent to the sandbox (which applies it); the answer is never recorded. */
async function crashAfterSend(key: string): Promise<{ id: string; key: string }> {
  const { api, profile, sandbox, clock } = w();
  const cred = await takeover(api, `agent-${key}`);
  const id = await create(api, cred, key, profile);
  const entered = await api.call('POST', `/v1/occurrences/${id}/enter`, { token: cred });
  assert.equal(entered.status, 200, entered.text);
  const ticket = entered.body as unknown as EntryTicket;
  const adapter = new HttpProviderAdapter(profile, {
    entryUrl: sandboxEntryUrl(sandbox.url),
    keys: NO_KEYS,
    clock,
  });
  await adapter.send(ticket);
  return { id, key: ticket.nativeKey ?? '' };
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
  world = { api, sandbox, profile, clock, unresolved: [], reserved: [] };
  // A lineage holds at most 10 pending occurrences (the domain's default limit): 10 per lineage.
  const creds: string[] = [];
  for (let i = 0; i < PAGED / 10; i++) creds.push(await takeover(api, `pager-agent-${i}`));
  for (let i = 0; i < PAGED; i++) {
    clock.advance(1000);
    const key = `pager-${String(i).padStart(2, '0')}`;
    w().reserved.push(await create(api, creds[Math.floor(i / 10)] ?? '', key, profile));
  }
  for (const key of UNRESOLVED) {
    clock.advance(1000);
    w().unresolved.push(await crashAfterSend(key));
  }
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

/** Focus moves in effects that run after the browser paints: read it until it settles. */
const focused = (page: Page) => page.evaluate<string>("document.activeElement?.textContent ?? ''");

browserTest('occurrences: a search after Next page starts at the first page of what it finds', async () => {
  const { context, page, problems } = await signedIn();
  await page.goto(`${w().api.url}/console/#/occurrences`);
  const rows = page.locator('tbody tr');
  await eventually(() => rows.count(), 25, 'the first page');
  const first = await keysShown(page);
  const pager = page.getByRole('navigation', { name: 'Pages of occurrences' });
  await pager.getByRole('button', { name: 'Next page' }).click();
  await eventually(() => rows.count(), TOTAL - 25, 'the second page');
  // A key of the first page: the unfiltered list's cursor is past it.
  const wanted = first.find((k) => k.startsWith('pager-')) ?? '';
  await page.getByLabel('Search by occurrence id or creation key').fill(wanted);
  await page.getByRole('button', { name: 'Find' }).click();
  await page.waitForURL(/creationKey=/);
  await eventually(() => keysShown(page), [wanted], 'the search finds the occurrence with that key');
  assert.equal(await pager.getByRole('button', { name: 'Previous page' }).isDisabled(), true);
  // Back to the unfiltered list: its first page again, not a cursor of another query.
  await page.goBack();
  await eventually(() => keysShown(page), first, 'Back shows the first page');
  assert.deepEqual(problems, []);
  await context.close();
});

browserTest(
  'occurrences: a filter change through the URL or the nav link after Next page starts at page one',
  async () => {
    const { context, page } = await signedIn();
    await page.goto(`${w().api.url}/console/#/occurrences`);
    const rows = page.locator('tbody tr');
    await eventually(() => rows.count(), 25, 'the first page');
    const first = await keysShown(page);
    await page.goto(`${w().api.url}/console/#/occurrences?phase=reserved`);
    await eventually(async () => (await keysShown(page)).length, 25, 'the reserved first page');
    const pager = page.getByRole('navigation', { name: 'Pages of occurrences' });
    await pager.getByRole('button', { name: 'Next page' }).click();
    await eventually(() => rows.count(), PAGED - 25, 'the reserved second page');
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Occurrences' }).click();
    await eventually(() => keysShown(page), first, 'the nav link shows the whole list from its first page');
    assert.equal(await pager.getByRole('button', { name: 'Previous page' }).isDisabled(), true);
    // A link to another filter after Next page: that filter's first page.
    await pager.getByRole('button', { name: 'Next page' }).click();
    await eventually(() => rows.count(), TOTAL - 25, 'the second page');
    await page.goto(`${w().api.url}/console/#/occurrences?creationKey=${first[0] ?? ''}`);
    await eventually(() => keysShown(page), [first[0]], 'the linked key is found');
    await context.close();
  },
);

browserTest(
  'an occurrence page keeps nothing of the one before: no answer, no open confirmation',
  async () => {
    const [a, b] = w().unresolved;
    assert.ok(a !== undefined && b !== undefined);
    const { context, page, problems } = await signedIn();
    await page.goto(`${w().api.url}/console/#/occurrences/${a.id}`);
    await page.getByRole('heading', { name: `Occurrence ${a.id}` }).waitFor();
    await page.getByRole('button', { name: 'Reconcile now' }).click();
    await page.getByRole('dialog').waitFor();
    await page.goto(`${w().api.url}/console/#/occurrences/${b.id}`);
    await page.getByRole('heading', { name: `Occurrence ${b.id}` }).waitFor();
    assert.equal(await page.getByRole('dialog').count(), 0, "A's confirmation does not stay open on B");
    await page.getByRole('button', { name: 'Reconcile now' }).click();
    await page.getByRole('button', { name: 'Confirm reconcile' }).click();
    await page.getByRole('heading', { name: 'Reconcile answer' }).waitFor();
    assert.equal(
      await page.locator('.result .verdict').innerText(),
      'Resolved: an authenticated answer settled it, outcome succeeded.',
    );
    await page.goto(`${w().api.url}/console/#/occurrences/${a.id}`);
    await page.getByRole('heading', { name: `Occurrence ${a.id}` }).waitFor();
    await page.getByRole('button', { name: 'Reconcile now' }).waitFor();
    assert.equal(
      await page.getByRole('heading', { name: 'Reconcile answer' }).count(),
      0,
      "B's answer is not shown on A",
    );
    assert.deepEqual(problems, []);
    await context.close();
  },
);

browserTest(
  'a filter change shows "Loading…", never the old rows, and no pager until its answer',
  async () => {
    const { context, page, problems } = await signedIn();
    await page.goto(`${w().api.url}/console/#/occurrences`);
    const rows = page.locator('tbody tr');
    await eventually(() => rows.count(), 25, 'the first page');
    // The next list read is held until the test lets it go.
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    await page.route('**/v1/occurrences?*', async (route) => {
      await held;
      await route.continue().catch(() => undefined); // the page may have moved on meanwhile
    });
    await page.goto(`${w().api.url}/console/#/occurrences?phase=entered`);
    await page.getByRole('status').filter({ hasText: 'Loading…' }).waitFor();
    assert.equal(await rows.count(), 0, 'no rows of the unfiltered query under the new filter');
    const region = page.getByRole('region', { name: /^Table/ });
    assert.equal(await region.getAttribute('aria-busy'), 'true');
    const pager = page.getByRole('navigation', { name: 'Pages of occurrences' });
    assert.equal(await pager.getByRole('button', { name: 'Next page' }).isDisabled(), true);
    release();
    await page.unroute('**/v1/occurrences?*');
    await eventually(
      async () => {
        const keys = await keysShown(page);
        return keys.length > 0 && keys.every((k) => UNRESOLVED.includes(k));
      },
      true,
      'the entered ones only',
    );
    assert.equal(await page.getByRole('status').filter({ hasText: 'Loading…' }).count(), 0);
    // Next page pressed from the keyboard: the pager is disabled while that page loads, and the
    // button keeps focus (aria-disabled), so focus is not dropped on <body>.
    await page.goto(`${w().api.url}/console/#/occurrences`);
    await eventually(() => rows.count(), 25, 'the first page again');
    let releaseNext: () => void = () => undefined;
    const heldNext = new Promise<void>((r) => (releaseNext = r));
    await page.route('**/v1/occurrences?*', async (route) => {
      await heldNext;
      await route.continue().catch(() => undefined);
    });
    await pager.getByRole('button', { name: 'Next page' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Loading…' }).waitFor();
    assert.equal(await pager.getByRole('button', { name: 'Next page' }).isDisabled(), true);
    assert.equal(await page.evaluate<string>("document.activeElement?.textContent ?? ''"), 'Next page');
    releaseNext();
    await page.unroute('**/v1/occurrences?*');
    await eventually(() => rows.count(), TOTAL - 25, 'the second page');
    // A filter nothing matches says so.
    await page.goto(`${w().api.url}/console/#/occurrences?creationKey=no-such-key`);
    await page.getByText('No occurrences match these filters.').waitFor();
    assert.equal(await rows.count(), 0);
    assert.deepEqual(problems, []);
    await context.close();
  },
);

browserTest('times name their zone, and a Created-from link holds the UTC instant', async () => {
  const { context, page } = await signedIn();
  await page.goto(`${w().api.url}/console/#/occurrences`);
  await eventually(() => page.locator('tbody tr').count(), 25, 'the first page');
  // The context is Europe/Berlin (browser.ts): December is CET.
  assert.match(await page.locator('tbody time').first().innerText(), /CET|GMT\+1/);
  await page.getByLabel('Created from').fill('2026-12-01T10:30');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.waitForURL(/from=/);
  const query = new URLSearchParams(new URL(page.url()).hash.split('?')[1] ?? '');
  assert.equal(query.get('from'), '2026-12-01T09:30:00Z', 'the instant, not a zone-less local time');
  assert.equal(
    await page.getByLabel('Created from').inputValue(),
    '2026-12-01T10:30',
    'shown in the viewer zone',
  );
  // The same link in another zone names the same instant.
  assert.ok(launched !== undefined);
  const other = await launched.browser.newContext({ timezoneId: 'America/New_York', locale: 'en-US' });
  const there = await other.newPage();
  await there.goto(`${w().api.url}/console/`);
  await there.getByLabel('Operator or admin token').fill(w().api.operator);
  await there.getByRole('button', { name: 'Sign in' }).click();
  const asked = there.waitForRequest(
    (r) => r.url().includes('/v1/occurrences?') && r.url().includes('from='),
  );
  await there.goto(`${w().api.url}/console/${new URL(page.url()).hash}`);
  assert.equal(new URL((await asked).url()).searchParams.get('from'), '2026-12-01T09:30:00.000Z');
  assert.equal(await there.getByLabel('Created from').inputValue(), '2026-12-01T04:30');
  await other.close();
  await context.close();
});

browserTest('the oldest unresolved age follows the clock on a quiet system', async () => {
  assert.ok(launched !== undefined);
  const { context, page } = await newPage(launched.browser);
  await page.clock.install();
  await page.goto(`${w().api.url}/console/`);
  await page.getByLabel('Operator or admin token').fill(w().api.operator);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const line = page.locator('p.big');
  const minutes = async (): Promise<number> => {
    const m = /, (\d+) (s|min) ago\./.exec(await line.innerText());
    assert.ok(m !== null, await line.innerText());
    return m[2] === 's' ? Number(m[1]) / 60 : Number(m[1]);
  };
  await eventually(async () => /ago\./.test(await line.innerText()), true, 'the oldest unresolved age');
  const before = await minutes();
  // No evidence, no reload: only the clock moves.
  await page.clock.fastForward('10:00');
  await eventually(async () => (await minutes()) >= before + 9, true, `ten minutes older than ${before} min`);
  await context.close();
});

browserTest("a work item's page starts at its own first page of evidence", async () => {
  const api = w().api;
  const input = { kind: 'queue_item', action_class: 'consequential_write', mission_binding: binding };
  const items = [
    await api.harness.createItem(input, 'operator:test'),
    await api.harness.createItem(input, 'operator:test'),
  ];
  await api.engine.transaction(async (tx) => {
    for (const item of items) {
      for (let i = 0; i < 60; i++) {
        await appendEvidence(tx, {
          subject: workSubject(item.id),
          type: 'page_test',
          body: { i },
          at: 1000 + i,
          actor: 'test',
        });
      }
    }
  });
  const [x, y] = items;
  assert.ok(x !== undefined && y !== undefined);
  const { context, page } = await signedIn();
  await page.goto(`${api.url}/console/#/harness/${x.id}`);
  await page.getByRole('heading', { name: `Item ${x.id}: queued` }).waitFor();
  const events = page.locator('.timeline > li');
  await eventually(() => events.count(), 50, "x's first page");
  const pager = page.getByRole('navigation', { name: "Pages of the item's evidence" });
  await pager.getByRole('button', { name: 'Next page' }).click();
  await eventually(async () => (await events.count()) < 50, true, "x's second page");
  await page.goto(`${api.url}/console/#/harness/${y.id}`);
  await page.getByRole('heading', { name: `Item ${y.id}: queued` }).waitFor();
  await eventually(() => events.count(), 50, "y's first page, not x's cursor");
  assert.equal(await pager.getByRole('button', { name: 'Previous page' }).isDisabled(), true);
  await context.close();
});

browserTest('confirmation steps take keyboard focus, and Escape cancels and gives it back', async () => {
  const c = w().unresolved[2];
  assert.ok(c !== undefined);
  const { context, page } = await signedIn(w().api.admin);
  await page.goto(`${w().api.url}/console/#/occurrences/${c.id}`);
  await page.getByRole('button', { name: 'Reconcile now' }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('dialog').waitFor();
  await eventually(() => focused(page), 'Confirm reconcile', 'focus on Confirm reconcile');
  await page.keyboard.press('Escape');
  await eventually(() => page.getByRole('dialog').count(), 0, 'Escape closes the dialog');
  await eventually(() => focused(page), 'Reconcile now', 'focus on Reconcile now');
  // Tokens: revoke asks first; Escape cancels, nothing is revoked.
  const made = await w().api.call('POST', '/v1/tokens', {
    token: w().api.admin,
    body: { role: 'operator', name: 'spare' },
  });
  assert.equal(made.status, 201, made.text);
  await page.goto(`${w().api.url}/console/#/tokens`);
  await page.getByRole('button', { name: 'Revoke spare' }).click();
  await page.getByRole('dialog').waitFor();
  await eventually(() => focused(page), 'Confirm revoke', 'focus on Confirm revoke');
  assert.deepEqual(await axeViolations(page), [], 'an open confirmation in the table');
  await page.keyboard.press('Escape');
  await eventually(() => page.getByRole('dialog').count(), 0, 'Escape closes the dialog');
  await eventually(() => focused(page), 'Revoke spare', 'focus on Revoke spare');
  const tokens = await w().api.call('GET', '/v1/tokens', { token: w().api.admin });
  const spare = (tokens.body['tokens'] as JsonObject[]).find((t) => t['id'] === made.body['id']);
  assert.equal(spare?.['revokedAt'], null, 'cancelled: not revoked');
  await context.close();
});

browserTest('"Reconcile now" only where the API reconciles; its answer in words, the JSON kept', async () => {
  const reserved = w().reserved[0] ?? '';
  const [, , c, d] = w().unresolved;
  assert.ok(c !== undefined && d !== undefined);
  const settled = await w().api.call('POST', `/v1/occurrences/${d.id}/reconcile`, {
    token: w().api.operator,
  });
  assert.equal(settled.status, 200, settled.text);
  const { context, page, problems } = await signedIn();
  await page.goto(`${w().api.url}/console/#/occurrences/${reserved}`);
  await page.getByRole('heading', { name: `Occurrence ${reserved}` }).waitFor();
  const fact = (name: string) =>
    page.locator('.facts dt', { hasText: name }).locator('xpath=following-sibling::dd[1]');
  assert.equal(await fact('Phase / outcome / effect').innerText(), 'reserved / unknown / not established');
  assert.equal(await fact('Unresolved').innerText(), 'no (reserved)', 'what the API says: unresolved false');
  assert.equal(await page.getByRole('button', { name: 'Reconcile now' }).count(), 0, 'not on a reserved one');
  // Every status answer comes unsigned: the pass records them, unauthenticated, and settles nothing.
  w().sandbox.addFault('all', 'unsigned'); // every source's answer (the last test here)
  await page.goto(`${w().api.url}/console/#/occurrences/${c.id}`);
  await page.getByRole('heading', { name: `Occurrence ${c.id}` }).waitFor();
  assert.equal(await fact('Unresolved').innerText(), 'yes: entered, its outcome not settled');
  await page.getByRole('button', { name: 'Reconcile now' }).click();
  await page.getByRole('button', { name: 'Confirm reconcile' }).click();
  await page.getByRole('heading', { name: 'Reconcile answer' }).waitFor();
  assert.equal(
    await page.locator('.result .verdict').innerText(),
    'Still unresolved. Missing knowledge (unauthenticated): the answer was not authenticated by a pinned key, so it cannot settle anything.',
  );
  await eventually(() => focused(page), 'Reconcile answer', 'focus moves to the answer');
  await page.getByText("The API's answer (JSON)").click();
  const json = JSON.parse(await page.locator('.result pre').innerText()) as { missingKnowledge: string };
  assert.equal(json.missingKnowledge, 'unauthenticated');
  assert.deepEqual(await axeViolations(page), [], 'the answer, in words and JSON');
  // A resolved one (reconciled over the API): no button, since the API would ask nothing.
  await page.goto(`${w().api.url}/console/#/occurrences/${d.id}`);
  await page.locator('h1 .badge', { hasText: 'succeeded' }).waitFor();
  assert.equal(await fact('Unresolved').innerText(), 'no (resolved)');
  assert.equal(await page.getByRole('button', { name: 'Reconcile now' }).count(), 0, 'not on a resolved one');
  assert.deepEqual(problems, []);
  await context.close();
});

browserTest('a route changed while the signed-in pages first render is followed', async () => {
  assert.ok(launched !== undefined);
  const { context, page, problems } = await newPage(launched.browser);
  // The hash changes in the microtask after the page navigation is first in the DOM: after the
  // route was read, before the effects that listen for changes run (they run after paint). Under
  // load a test's (or a user's) navigation right after sign-in lands there (CI, session 26).
  const target = `#/lineages/agent-${UNRESOLVED[0] ?? ''}`;
  // A page script (the test is compiled without the DOM's types).
  await page.addInitScript(`
    const seen = new MutationObserver(() => {
      if (document.querySelector('nav[aria-label="Pages"]') === null) return;
      seen.disconnect();
      location.hash = ${JSON.stringify(target)};
    });
    seen.observe(document, { childList: true, subtree: true });`);
  await page.goto(`${w().api.url}/console/`);
  await page.getByLabel('Operator or admin token').fill(w().api.operator);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: `agent-${UNRESOLVED[0] ?? ''}: generation 1` }).waitFor();
  assert.equal(new URL(page.url()).hash, target);
  assert.deepEqual(problems, []);
  await context.close();
});

browserTest('"Reconcile now" in flight reads "Reconciling…" and cannot be confirmed again', async () => {
  const a = w().unresolved[0];
  assert.ok(a !== undefined);
  const { context, page, problems } = await signedIn();
  let posts = 0;
  let release: () => void = () => undefined;
  const held = new Promise<void>((r) => (release = r));
  await page.route('**/v1/occurrences/*/reconcile', async (route) => {
    posts++;
    await held;
    await route.continue();
  });
  await page.goto(`${w().api.url}/console/#/occurrences/${a.id}`);
  await page.getByRole('button', { name: 'Reconcile now' }).click();
  await page.getByRole('button', { name: 'Confirm reconcile' }).click();
  const busy = page.getByRole('button', { name: 'Reconciling…' });
  await busy.waitFor();
  assert.equal(await busy.isDisabled(), true);
  await busy.click({ force: true });
  assert.equal(await page.getByRole('dialog').count(), 0, 'no second confirmation while in flight');
  release();
  await page.getByRole('heading', { name: 'Reconcile answer' }).waitFor();
  assert.equal(posts, 1);
  assert.deepEqual(problems, []);
  await context.close();
});

/** The browser tests, or (when they cannot run) one visible skipped line in their place. */
function browserTest(name: string, fn: () => Promise<void>): void {
  if (reason === undefined) test(name, fn);
}
if (reason !== undefined) test(reason, { skip: reason }, () => undefined);
