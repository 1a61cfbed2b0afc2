/**
 * A listing page holding SEVERAL items about one occurrence (AOC-CASE-009): the status-source layer
 * hands the service every matching item, not the first, so the outcome never depends on their
 * order; items that disagree (another reference, a contradicting status) put the occurrence in
 * conflict and every item's facts are kept. A page holding more items than were asked for is not
 * a page of the listing: unavailable. A signing middlebox in front of the sandbox's listing serves
 * its real, re-signed pages with the items the test adds.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import {
  hmacSecretId,
  sandboxHeaderName,
  sandboxSignedString,
  signSandboxMessage,
} from '../../src/providers/index.js';
import { enterOne, openStripeWorld } from './stripe-world.js';
import { ask, openWorld, pay, type World } from './world.js';
import { listenLoopback } from '../support/loopback.js';

type Item = Record<string, unknown>;
/** What the middlebox does to the page holding the occurrence's payment. */
type Edit = (items: Item[], mine: Item) => Item[];

interface Boxed {
  readonly w: World;
  /** The native key whose payment the middlebox edits the page around. */
  readonly watch: (key: string) => void;
}

async function middleboxWorld(t: TestContext, edit: Edit): Promise<Boxed> {
  const hmacSecret = Buffer.alloc(32, 9); // the world's sandbox secret (world.ts)
  let sandboxOrigin = '';
  let key = '';
  let now = (): number => Date.now();
  const box = createServer((req, res) => {
    void (async () => {
      const page = (await (await fetch(`${sandboxOrigin}${req.url ?? ''}`)).json()) as { data: Item[] };
      const mine = page.data.find((i) => i['idempotency_key'] === key);
      if (mine !== undefined) page.data = edit(page.data, mine);
      const body = JSON.stringify(page);
      const k = { kind: 'hmac', secretId: hmacSecretId(hmacSecret), secret: hmacSecret } as const;
      const signature = signSandboxMessage(
        k,
        sandboxSignedString({ method: 'GET', path: req.url ?? '', body }),
        now(),
      );
      res
        .writeHead(200, { 'content-type': 'application/json', [sandboxHeaderName('hmac')]: signature })
        .end(body);
    })();
  });
  const boxOrigin = await listenLoopback(t, box);
  const w = await openWorld(t, {
    edit: (p) => ({
      ...p,
      statusSources: p.statusSources.map((s) => {
        if (s.id !== 'listing') return s;
        sandboxOrigin = new URL(s.url).origin;
        return { ...s, url: s.url.replace(sandboxOrigin, boxOrigin) };
      }),
    }),
  });
  assert.deepEqual(w.hmacSecret, hmacSecret);
  now = () => w.clock.wallMs();
  return { w, watch: (k) => void (key = k) };
}

/** Another payment for the same key: another reference, failed. */
const otherRef = (mine: Item): Item => {
  const ref = String(mine['reference']);
  return { ...mine, reference: `${ref.slice(0, -1)}${ref.endsWith('0') ? '1' : '0'}`, status: 'failed' };
};

async function observations(w: World, id: string) {
  const { evidence } = await w.svc.getOccurrence(id);
  return evidence
    .filter((e) => e.type === 'observation_recorded')
    .map(
      (e) =>
        e.body as {
          observation: { alsoMatched?: { nativeStatus: string | null }[] };
          interpretation: { missingKnowledge: string | null; conflictingItems?: boolean };
        },
    );
}

for (const order of ['theirs first', 'mine first'] as const) {
  test(`listing: one page with two payments for the key that disagree is a conflict, ${order}`, async (t) => {
    const { w, watch } = await middleboxWorld(t, (items, mine) =>
      order === 'mine first' ? [...items, otherRef(mine)] : [otherRef(mine), ...items],
    );
    const { ticket, key } = await pay(w, `inv-two-${order === 'mine first' ? 'a' : 'b'}`, [
      'drop_response_after_apply',
    ]);
    watch(key);
    const r = await ask(w, ticket.occurrence.id, 'listing');
    assert.equal(r.effective, false);
    assert.equal(r.missingKnowledge, 'conflict');
    assert.deepEqual(
      [r.occurrence.phase, r.occurrence.outcome, r.occurrence.effect, r.occurrence.conflict],
      ['entered', 'unknown', 'unresolved', true],
      'neither payment is picked',
    );
    assert.equal(r.occurrence.provider.providerReference, null, 'no reference is bound');
    const last = (await observations(w, ticket.occurrence.id)).at(-1);
    assert.equal(last?.interpretation.conflictingItems, true);
    assert.equal(last?.observation.alsoMatched?.length, 1, 'the other item’s facts are kept');
  });
}

test('listing: agreeing items about the key (the same payment twice) resolve it as one would', async (t) => {
  const { w, watch } = await middleboxWorld(t, (items, mine) => [{ ...mine, status: 'pending' }, ...items]);
  const { ticket, key } = await pay(w, 'inv-same', ['drop_response_after_apply']);
  watch(key);
  const r = await ask(w, ticket.occurrence.id, 'listing');
  assert.deepEqual([r.effective, r.occurrence.outcome, r.occurrence.conflict], [true, 'success', false]);
  assert.equal(typeof r.occurrence.provider.providerReference, 'string');
});

test('listing: a page holding more items than were asked for is unavailable, not read', async (t) => {
  // The world asks for pages of 50 (StatusSources' default); the middlebox pads the page past it.
  const { w, watch } = await middleboxWorld(t, (items, mine) => [
    ...items,
    ...Array.from({ length: 60 }, () => ({ ...mine })),
  ]);
  const { ticket, key } = await pay(w, 'inv-huge', ['drop_response_after_apply']);
  watch(key);
  const { occurrence } = await w.svc.getOccurrence(ticket.occurrence.id);
  const reading = await w.sources.query(w.profile.document, occurrence, 'listing');
  assert.match(reading.detail, /more than the 50 asked for/);
  const r = await w.svc.observe(reading.observation);
  assert.deepEqual([r.missingKnowledge, r.occurrence.unresolved], ['unavailable', true]);
});

/**
 * The declared (format 2) listing, the Stripe profile's `events`: a middlebox at the profile's
 * origin forwards to the Stripe-compatible sandbox and adds, beside the payment's own events, one
 * for ANOTHER PaymentIntent under the same idempotency key, canceled.
 */
for (const order of ['theirs first', 'mine first'] as const) {
  test(`Stripe events: another PaymentIntent canceled under the key on the same page is a conflict, ${order}`, async (t) => {
    let sandboxOrigin = '';
    let key = '';
    const box = createServer((req, res) => {
      void (async () => {
        const auth = req.headers.authorization;
        const r = await fetch(`${sandboxOrigin}${req.url ?? ''}`, {
          headers: auth === undefined ? {} : { authorization: auth },
        });
        let body = await r.text();
        if ((req.url ?? '').startsWith('/v1/events') && r.status === 200 && key !== '') {
          const page = JSON.parse(body) as { data: Item[] };
          const mine = page.data.filter((e) => (e['request'] as Item | null)?.['idempotency_key'] === key);
          const theirs = mine.map((e) => {
            const copy = JSON.parse(JSON.stringify(e)) as { id: string; data: { object: Item } };
            copy.id = `${copy.id}x`;
            copy.data.object = { ...copy.data.object, id: 'pi_Other000000000000000001', status: 'canceled' };
            return copy;
          });
          page.data = order === 'mine first' ? [...page.data, ...theirs] : [...theirs, ...page.data];
          body = JSON.stringify(page);
        }
        res.writeHead(r.status, { 'content-type': 'application/json' }).end(body);
      })();
    });
    const boxOrigin = await listenLoopback(t, box);
    const w = await openStripeWorld(t, 'stripe-payment-intents', (p) => {
      sandboxOrigin = new URL(p.entry?.url ?? '').origin;
      return JSON.parse(JSON.stringify(p).replaceAll(sandboxOrigin, boxOrigin)) as typeof p;
    });
    const params = { amount: 2000, currency: 'usd', confirm: true, payment_method: 'pm_card_visa' };
    const ticket = await enterOne(w, `inv-stripe-two-${order.length}`, params, 2000);
    await w.stripe.paymentIntents.create(params, { idempotencyKey: ticket.nativeKey ?? undefined });
    key = ticket.nativeKey ?? '';
    const { occurrence } = await w.svc.getOccurrence(ticket.occurrence.id);
    const reading = await w.sources.query(w.profile.document, occurrence, 'events');
    const r = await w.svc.observe(reading.observation);
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
}
