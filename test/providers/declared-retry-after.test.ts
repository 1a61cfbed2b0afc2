/**
 * A format 2 (declared) status source passes the provider's `Retry-After` on with its reading, as a
 * format 1 lookup does, so the background reconciler asks no sooner than the provider said
 * (docs/providers.md "Background reconciler"). A middlebox at the Stripe profile's origin answers
 * the status reads `429` (JSON, as Stripe does) or `503` (an HTML page) with a `Retry-After`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { enterOne, openStripeWorld } from './stripe-world.js';
import { openWorld, pay } from './world.js';

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
    await new Promise<void>((resolve) => box.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => box.close(() => resolve())));
    t.after(() => box.closeAllConnections());
    const boxOrigin = `http://127.0.0.1:${(box.address() as AddressInfo).port}`;
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
  await new Promise<void>((resolve) => box.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => box.close(() => resolve())));
  t.after(() => box.closeAllConnections());
  const boxOrigin = `http://127.0.0.1:${(box.address() as AddressInfo).port}`;
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
