/**
 * A status source of either format passes the provider's `Retry-After` on with its reading, so the
 * background reconciler asks no sooner than the provider said (docs/providers.md "Background
 * reconciler"). Middleboxes answer the status reads `429` (JSON, as Stripe does) or `503` (an HTML
 * page) with a `Retry-After`: format 2's lookup and events listing, format 1's lookup and a
 * listing's later page.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { enterOne, openStripeWorld } from './stripe-world.js';
import { openWorld, pay } from './world.js';
import { listenLoopback } from '../support/loopback.js';

for (const [label, status, type, body] of [
  ['429 rate limited', 429, 'application/json', '{"error":{"type":"rate_limit_error"}}'],
  ['503 with an HTML page', 503, 'text/html', '<html>busy</html>'],
] as const) {
  test(`declared sources: a ${label} answer's Retry-After travels with the reading (listing and lookup)`, async (t) => {
    let sandboxOrigin = '';
    const box = createServer((req, res) => {
      void (async () => {
        const path = req.url ?? '';
        if (
          req.method === 'GET' &&
          (path.startsWith('/v1/events') || path.startsWith('/v1/payment_intents/'))
        ) {
          res.writeHead(status, { 'content-type': type, 'retry-after': '120' }).end(body);
          return;
        }
        const r = await fetch(`${sandboxOrigin}${path}`, { method: req.method ?? 'GET' });
        res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text());
      })();
    });
    const boxOrigin = await listenLoopback(t, box);
    const w = await openStripeWorld(t, 'stripe-payment-intents', (p) => {
      sandboxOrigin = new URL(p.entry?.url ?? '').origin;
      return JSON.parse(JSON.stringify(p).replaceAll(sandboxOrigin, boxOrigin)) as typeof p;
    });
    const ticket = await enterOne(w, `inv-retry-${status}`, { amount: 2000, currency: 'usd' }, 2000);
    const { occurrence } = await w.svc.getOccurrence(ticket.occurrence.id);
    const listed = await w.sources.query(w.profile.document, occurrence, 'events');
    assert.equal(listed.observation.result, 'unavailable', listed.detail);
    assert.equal(listed.retryAfter, '120');
    // The by-id lookup is asked for a reference (as once one is bound): the same answer.
    const withRef = {
      ...occurrence,
      provider: { ...occurrence.provider, providerReference: 'pi_Retry0001' },
    };
    const looked = await w.sources.query(w.profile.document, withRef, 'by-id');
    assert.equal(looked.observation.result, 'unavailable', looked.detail);
    assert.equal(looked.retryAfter, '120');
  });
}

test('format 1 lookup: an HTML 503 page is unavailable with its status and type, and passes its Retry-After on', async (t) => {
  const box = createServer((_req, res) => {
    res.writeHead(503, { 'content-type': 'text/html', 'retry-after': '90' }).end('<html>busy</html>');
  });
  const boxOrigin = await listenLoopback(t, box);
  // The profile's by-key lookup points at the box; entry and everything else at the sandbox.
  const w = await openWorld(t, {
    edit: (p) => ({
      ...p,
      statusSources: p.statusSources.map((s) =>
        s.id === 'by-key' ? { ...s, url: s.url.replace(new URL(s.url).origin, boxOrigin) } : s,
      ),
    }),
  });
  const { ticket } = await pay(w, 'inv-retry-html', ['drop_response_after_apply']);
  const { occurrence } = await w.svc.getOccurrence(ticket.occurrence.id);
  const reading = await w.sources.query(w.profile.document, occurrence, 'by-key');
  assert.equal(reading.observation.result, 'unavailable');
  assert.equal(reading.detail, 'http 503 media_type text/html');
  assert.equal(reading.retryAfter, '90');
});

for (const [label, status, type, body] of [
  ['429 JSON answer', 429, 'application/json', '{"error":"rate_limited"}'],
  ['503 HTML page', 503, 'text/html', '<html>busy</html>'],
] as const) {
  test(`format 1 listing: a ${label} on a page is unavailable and passes its Retry-After on`, async (t) => {
    let origin = '';
    // Page 1 is the sandbox's own; page 2 (asked with a cursor) is refused with a Retry-After.
    const box = createServer((req, res) => {
      void (async () => {
        const path = req.url ?? '';
        if (path.includes('starting_after')) {
          res.writeHead(status, { 'content-type': type, 'retry-after': '45' }).end(body);
          return;
        }
        const r = await fetch(`${origin}${path}`);
        const headers = Object.fromEntries(r.headers.entries());
        delete headers['content-length'];
        delete headers['transfer-encoding'];
        res.writeHead(r.status, headers).end(await r.text());
      })();
    });
    const boxOrigin = await listenLoopback(t, box);
    const w = await openWorld(t, {
      sources: { pageSize: 1 },
      edit: (p) => ({
        ...p,
        statusSources: p.statusSources.map((s) => {
          if (s.id !== 'listing') return s;
          origin = new URL(s.url).origin;
          return { ...s, url: s.url.replace(origin, boxOrigin) };
        }),
      }),
    });
    await pay(w, `inv-retry-page1-${status}`); // fills page 1, so the walk asks for page 2
    const { ticket } = await pay(w, `inv-retry-list-${status}`, ['drop_response_after_apply']);
    const { occurrence } = await w.svc.getOccurrence(ticket.occurrence.id);
    const reading = await w.sources.query(w.profile.document, occurrence, 'listing');
    assert.equal(reading.observation.result, 'unavailable', reading.detail);
    assert.match(reading.detail, /^page 2: /);
    assert.equal(reading.retryAfter, '45');
  });
}
