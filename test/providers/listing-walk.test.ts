/**
 * The listing walk judges every item about the occurrence together, whatever page holds it
 * (AOC-CASE-009), and an item about the attempt that cannot be judged (an unmapped native status,
 * an item the reader cannot read) leaves the occurrence unresolved instead of being passed over
 * (AOC: unknown or unmapped native states leave the occurrence unresolved). Both profile formats:
 * the sandbox's own listing (format 1) behind a signing middlebox, and the Stripe profile's
 * `events` listing (format 2) behind a forwarding middlebox in front of the Stripe-compatible
 * sandbox. The middleboxes serve the sandboxes' real pages with the items a test adds.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { StatusSourcesOptions } from '../../src/providers/index.js';
import {
  hmacSecretId,
  sandboxHeaderName,
  sandboxSignedString,
  signSandboxMessage,
  StatusSources,
} from '../../src/providers/index.js';
import { enterOne, openStripeWorld, type StripeWorld } from './stripe-world.js';
import { ask, openWorld, pay, type World } from './world.js';
import { listenLoopback } from '../support/loopback.js';

type Item = Record<string, unknown>;
/** What a middlebox does to one page: its request URL and its items. */
type Edit = (url: string, items: Item[]) => Item[];

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers: Record<string, string>;
}

async function listen(t: TestContext, handle: (url: string, auth: string | undefined) => Promise<Answer>) {
  const box = createServer((req, res) => {
    void (async () => {
      const answer = await handle(req.url ?? '', req.headers.authorization);
      res.writeHead(answer.status, answer.headers).end(answer.body);
    })();
  });
  return listenLoopback(t, box);
}

interface Boxed {
  readonly w: World;
  /** The sandbox's own listing, unedited (to take an item the test copies). */
  readonly raw: () => Promise<Item[]>;
  readonly setEdit: (edit: Edit) => void;
  /** Pages whose request URL this returns true for go out unsigned, or under another account. */
  readonly setUntrusted: (how: Untrusted) => void;
}

/** What a middlebox does to make a page untrustworthy: leave it unsigned, or name another account. */
type Untrusted = (url: string) => 'unsigned' | 'another-account' | undefined;

/** Format 1: a signing middlebox in front of the sandbox's listing. */
async function sandboxWorld(t: TestContext, sources: Partial<StatusSourcesOptions> = {}): Promise<Boxed> {
  const hmacSecret = Buffer.alloc(32, 9); // the world's sandbox secret (world.ts)
  let listingUrl = '';
  let edit: Edit = (_u, items) => items;
  let untrusted: Untrusted = () => undefined;
  let now = (): number => Date.now();
  let origin = '';
  const boxOrigin = await listen(t, async (path) => {
    const page = (await (await fetch(`${origin}${path}`)).json()) as { data: Item[]; account?: string };
    page.data = edit(path, page.data);
    const how = untrusted(path);
    if (how === 'another-account') page.account = `${page.account ?? ''}-other`;
    const body = JSON.stringify(page);
    const k = { kind: 'hmac', secretId: hmacSecretId(hmacSecret), secret: hmacSecret } as const;
    const signature = signSandboxMessage(k, sandboxSignedString({ method: 'GET', path, body }), now());
    const signed = how === 'unsigned' ? {} : { [sandboxHeaderName('hmac')]: signature };
    return { status: 200, body, headers: { 'content-type': 'application/json', ...signed } };
  });
  const w = await openWorld(t, {
    sources,
    edit: (p) => ({
      ...p,
      statusSources: p.statusSources.map((s) => {
        if (s.id !== 'listing') return s;
        origin = new URL(s.url).origin;
        listingUrl = s.url;
        return { ...s, url: s.url.replace(origin, boxOrigin) };
      }),
    }),
  });
  assert.deepEqual(w.hmacSecret, hmacSecret);
  now = () => w.clock.wallMs();
  const raw = async (): Promise<Item[]> => {
    const url = `${listingUrl.replace('{account}', String(w.profile.document.account))}?limit=100`;
    return ((await (await fetch(url)).json()) as { data: Item[] }).data;
  };
  return { w, raw, setEdit: (e) => void (edit = e), setUntrusted: (u) => void (untrusted = u) };
}

const mineIn = (items: Item[], key: string): Item => {
  const mine = items.find((i) => i['idempotency_key'] === key);
  assert.ok(mine, 'the sandbox lists the payment');
  return mine;
};

/** Another payment for the same key: another reference, failed. */
const otherRef = (mine: Item): Item => {
  const ref = String(mine['reference']);
  return { ...mine, reference: `${ref.slice(0, -1)}${ref.endsWith('0') ? '1' : '0'}`, status: 'failed' };
};

async function lastObservation(w: World, id: string) {
  const { evidence } = await w.svc.getOccurrence(id);
  const last = evidence.filter((e) => e.type === 'observation_recorded').at(-1);
  return last?.body as {
    observation: {
      nativeStatus: string | null;
      complete: boolean;
      alsoMatched?: unknown[];
      responseDigest?: unknown;
    };
    interpretation: { missingKnowledge: string | null };
  };
}

test('format 1 listing: a contradicting payment for the key on an EARLIER page than ours is a conflict', async (t) => {
  const { w, raw, setEdit } = await sandboxWorld(t, { pageSize: 2 });
  // Creation order: two other payments fill page 1, ours is on page 2.
  await pay(w, 'inv-walk-other-1');
  await pay(w, 'inv-walk-other-2');
  const { ticket, key } = await pay(w, 'inv-walk-mine', ['drop_response_after_apply']);
  const mine = mineIn(await raw(), key);
  // Page 1 (no cursor): its first item becomes a failed payment for our key under another reference;
  // its last item stays, so the cursor to page 2 is the sandbox's own.
  setEdit((url, items) => (url.includes('starting_after') ? items : [otherRef(mine), ...items.slice(1)]));
  const r = await ask(w, ticket.occurrence.id, 'listing');
  assert.equal(r.missingKnowledge, 'conflict');
  assert.deepEqual(
    [
      r.occurrence.outcome,
      r.occurrence.effect,
      r.occurrence.conflict,
      r.occurrence.provider.providerReference,
    ],
    ['unknown', 'unresolved', true, null],
    'neither payment is picked, no reference is bound',
  );
  const last = await lastObservation(w, ticket.occurrence.id);
  assert.equal(last.observation.alsoMatched?.length, 1, 'both payments’ facts are kept');
});

test('format 1 listing: a walk cut by its page bound after a match is judged on the pages read, and says so', async (t) => {
  const { w } = await sandboxWorld(t);
  const { ticket } = await pay(w, 'inv-cut-mine', ['drop_response_after_apply']);
  await pay(w, 'inv-cut-later'); // a later payment: the listing goes on past our page
  const { occurrence } = await w.svc.getOccurrence(ticket.occurrence.id);
  const cut = new StatusSources({ keys: w.keys, clock: w.clock, pageSize: 1, maxPages: 1 });
  const reading = await cut.query(w.profile.document, occurrence, 'listing');
  assert.match(reading.detail, /stopped after 1 pages; judged on the pages read/);
  assert.deepEqual([reading.observation.result, reading.observation.complete], ['found', false]);
  // A listing longer than the bound (a busy account) still settles on the match it found; the
  // evidence keeps that the walk did not reach the end.
  const r = await w.svc.observe(reading.observation);
  assert.deepEqual([r.effective, r.occurrence.outcome, r.occurrence.unresolved], [true, 'success', false]);
  const last = await lastObservation(w, ticket.occurrence.id);
  assert.deepEqual([last.observation.nativeStatus, last.observation.complete], ['succeeded', false]);
});

for (const how of ['unsigned', 'another-account'] as const) {
  test(`format 1 listing: a page ${how === 'unsigned' ? 'without a valid signature' : 'about another account'} AFTER a match leaves the walk unavailable, not settled on the pages before it`, async (t) => {
    const { w, setUntrusted } = await sandboxWorld(t, { pageSize: 1 });
    const { ticket } = await pay(w, 'inv-untrusted-mine', ['drop_response_after_apply']);
    await pay(w, 'inv-untrusted-later'); // page 2: the walk must read it to be complete
    // Page 1 (ours) is authentic; the page after it is not trustworthy. A contradiction could hide
    // there, and unlike a page bound the walk was not cut by Baton's own limit (AOC-CASE-008/009).
    setUntrusted((url) => (url.includes('starting_after') ? how : undefined));
    const { occurrence } = await w.svc.getOccurrence(ticket.occurrence.id);
    const reading = await w.sources.query(w.profile.document, occurrence, 'listing');
    assert.equal(reading.observation.result, 'unavailable', reading.detail);
    assert.match(reading.detail, /^page 2: .*after a match$/);
    const r = await ask(w, ticket.occurrence.id, 'listing');
    assert.deepEqual(
      [r.occurrence.outcome, r.occurrence.effect, r.occurrence.unresolved],
      ['unknown', 'unresolved', true],
      'the match on page 1 does not settle the occurrence',
    );
  });
}

for (const [label, sibling, reason] of [
  [
    'a native status the profile does not map',
    (m: Item) => ({ ...m, status: 'reversed' }),
    'unmapped_status',
  ],
  ['a status that is not a string', (m: Item) => ({ ...m, status: 7 }), 'unmapped_status'],
  [
    'an item that is not a payment',
    (m: Item) => ({ ...m, object: 'paymnt', status: 'failed' }),
    'unavailable',
  ],
] as const) {
  test(`format 1 listing: our succeeded payment beside a copy with ${label} stays unresolved (${reason})`, async (t) => {
    const { w, setEdit } = await sandboxWorld(t);
    const { ticket, key } = await pay(w, `inv-sib-${reason}-${label.length}`, ['drop_response_after_apply']);
    setEdit((_u, items) => {
      const mine = items.find((i) => i['idempotency_key'] === key);
      return mine === undefined ? items : [...items, sibling(mine)];
    });
    const r = await ask(w, ticket.occurrence.id, 'listing');
    assert.deepEqual(
      [r.effective, r.missingKnowledge, r.occurrence.outcome, r.occurrence.unresolved],
      [false, reason, 'unknown', true],
    );
    const last = await lastObservation(w, ticket.occurrence.id);
    assert.equal(last.interpretation.missingKnowledge, reason);
    // Nothing is dropped: the sibling's facts (or the page holding it) are in the evidence.
    if (reason === 'unmapped_status') assert.equal(last.observation.alsoMatched?.length, 1);
    // The page holding it is kept (as its digest: the sandbox profile marks requests private).
    else assert.equal(typeof last.observation.responseDigest, 'string');
  });
}

// --- format 2: the Stripe profile's `events` listing ------------------------------------------------

/** What the middlebox does to one page of `/v1/events`, given the occurrence's native key. */
type StripeEdit = (url: string, events: Item[], key: string) => Item[];

interface StripeBoxed {
  readonly w: StripeWorld;
  readonly setEdit: (e: StripeEdit) => void;
  /** Enter one payment, create its PaymentIntent (ack lost: no reference bound) and watch its key. */
  readonly payOne: (invoice: string) => Promise<{ id: string; key: string }>;
  /** Every event of the sandbox, unedited, newest first. */
  readonly events: () => Promise<Item[]>;
}

const PARAMS = { amount: 2000, currency: 'usd', confirm: true, payment_method: 'pm_card_visa' };

async function stripeBoxWorld(t: TestContext): Promise<StripeBoxed> {
  let sandboxOrigin = '';
  let edit: StripeEdit = (_u, items) => items;
  let key = '';
  const boxOrigin = await listen(t, async (path, auth) => {
    const r = await fetch(`${sandboxOrigin}${path}`, {
      headers: auth === undefined ? {} : { authorization: auth },
    });
    let body = await r.text();
    if (path.startsWith('/v1/events') && r.status === 200 && key !== '') {
      const page = JSON.parse(body) as { data: Item[] };
      page.data = edit(path, page.data, key);
      body = JSON.stringify(page);
    }
    return { status: r.status, body, headers: { 'content-type': 'application/json' } };
  });
  const w = await openStripeWorld(t, 'stripe-payment-intents', (p) => {
    sandboxOrigin = new URL(p.entry?.url ?? '').origin;
    return JSON.parse(JSON.stringify(p).replaceAll(sandboxOrigin, boxOrigin)) as typeof p;
  });
  return {
    w,
    setEdit: (e) => void (edit = e),
    payOne: async (invoice) => {
      const ticket = await enterOne(w, invoice, PARAMS, 2000);
      await w.stripe.paymentIntents.create(PARAMS, { idempotencyKey: ticket.nativeKey ?? undefined });
      key = ticket.nativeKey ?? '';
      return { id: ticket.occurrence.id, key };
    },
    events: async () => {
      const url = `${sandboxOrigin}/v1/events?limit=100`;
      const res = await fetch(url, { headers: { authorization: `Bearer ${w.sandbox.secretKey}` } });
      return ((await res.json()) as { data: Item[] }).data;
    },
  };
}

const requestKey = (e: Item): unknown => (e['request'] as Item | null)?.['idempotency_key'];

/** A copy of one event: a new id, its `data.object` changed. */
function copyEvent(e: Item, object: (o: Item) => Item, request?: Item): Item {
  const copy = JSON.parse(JSON.stringify(e)) as Item & { data: { object: Item } };
  copy['id'] = `${String(copy['id'])}x`;
  copy.data.object = object(copy.data.object);
  if (request !== undefined) copy['request'] = request;
  return copy;
}

async function judge(w: StripeWorld, id: string) {
  const { occurrence } = await w.svc.getOccurrence(id);
  const reading = await w.sources.query(w.profile.document, occurrence, 'events');
  return { reading, r: await w.svc.observe(reading.observation) };
}

test('Stripe events: another PaymentIntent canceled under our key on an EARLIER page than ours is a conflict', async (t) => {
  const { w, setEdit, payOne, events } = await stripeBoxWorld(t);
  const { id, key } = await payOne('inv-pages-mine');
  // Later payments push ours off the first page (page size 5, newest first).
  for (let i = 0; i < 4; i += 1) await w.stripe.paymentIntents.create({ ...PARAMS, amount: 100 + i });
  const template = (await events()).find((e) => requestKey(e) === key);
  assert.ok(template, 'the sandbox lists our PaymentIntent’s events');
  const theirs = copyEvent(template, (o) => ({ ...o, id: 'pi_Other000000000000000001', status: 'canceled' }));
  // Page 1 only (no cursor): ours are not on it; its last event stays, so the cursor is the sandbox's.
  setEdit((url, page) => {
    if (url.includes('starting_after')) return page;
    assert.ok(!page.some((e) => requestKey(e) === key), 'our events are on a later page');
    return [theirs, ...page.slice(1)];
  });
  const { reading, r } = await judge(w, id);
  assert.equal(r.missingKnowledge, 'conflict', reading.detail);
  assert.deepEqual(
    [
      r.occurrence.outcome,
      r.occurrence.effect,
      r.occurrence.conflict,
      r.occurrence.provider.providerReference,
    ],
    ['unknown', 'unresolved', true, null],
    'neither PaymentIntent is picked',
  );
});

for (const [label, change, reason] of [
  [
    'a status the profile does not map',
    (o: Item) => ({ ...o, status: 'requires_reauthorization' }),
    'unmapped_status',
  ],
  ['no status', (o: Item) => ({ ...o, status: null }), 'unavailable'],
  [
    'canceled with the amount as a string',
    (o: Item) => ({ ...o, amount: String(o['amount']), status: 'canceled' }),
    'unavailable',
  ],
] as const) {
  test(`Stripe events: our succeeded events beside a newer event for the same PaymentIntent with ${label} stay unresolved (${reason})`, async (t) => {
    const { w, setEdit, payOne } = await stripeBoxWorld(t);
    const { id } = await payOne(`inv-sib-${label.length}`);
    setEdit((_u, page, key) => {
      const mine = page.find((e) => requestKey(e) === key);
      return mine === undefined ? page : [copyEvent(mine, change), ...page.slice(0, 4)];
    });
    const { reading, r } = await judge(w, id);
    assert.deepEqual(
      [r.effective, r.missingKnowledge, r.occurrence.outcome, r.occurrence.unresolved],
      [false, reason, 'unknown', true],
      reading.detail,
    );
  });
}

test('Stripe events: an unreadable event carrying ANOTHER request’s key and another PaymentIntent is passed over', async (t) => {
  // nativeKeyOf causing_request (docs/providers.md): another request's key is no key here, and with no
  // reference bound the event anchors to nothing: it is not about this attempt, readable or not.
  const { w, setEdit, payOne } = await stripeBoxWorld(t);
  const { id } = await payOne('inv-sib-other-request');
  setEdit((_u, page, key) => {
    const mine = page.find((e) => requestKey(e) === key);
    if (mine === undefined) return page;
    const request = { id: 'req_other', idempotency_key: 'someone-elses-key' };
    const stray = copyEvent(mine, (o) => ({ ...o, id: 'pi_Other000000000000000002', amount: 'x' }), request);
    return [stray, ...page.slice(0, 4)];
  });
  const { reading, r } = await judge(w, id);
  assert.deepEqual([r.effective, r.occurrence.outcome], [true, 'success'], reading.detail);
});
