/**
 * src/providers/http-client.ts: what an answer must be before anything reads it. Over the 1 MiB cap
 * it is `too_large`, whole, never a truncated body (docs/providers.md "HTTP adapter"); a request
 * that accepts only JSON (every status query) is not answered by another media type.
 */
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { test, type TestContext } from 'node:test';
import { exchange, isJsonMediaType } from '../../src/providers/http-client.js';
import { listenLoopback } from '../support/loopback.js';

const CAP = 1_048_576;

type Answer = (path: string, res: ServerResponse, accept: string | undefined) => void;

async function serve(t: TestContext, answer: Answer): Promise<string> {
  const server = createServer((req, res) => answer(req.url ?? '/', res, req.headers.accept));
  return listenLoopback(t, server);
}

test('an answer over the 1 MiB cap is too_large even when its last chunk is the one that crosses it', async (t) => {
  const doc = '{"object":"payment","status":"succeeded"}';
  const origin = await serve(t, (path, res) => {
    const size = Number(path.split('/')[1]);
    res.writeHead(200, { 'content-type': 'application/json' });
    // A JSON document padded with whitespace up to the cap, then the bytes past it: cut at the cap,
    // the body would still parse as the document.
    const body = doc + ' '.repeat(CAP - doc.length) + 'X'.repeat(size - CAP);
    // The byte that crosses the cap is the body's very last: it comes in the last chunk.
    res.write(body.slice(0, -1), () => res.end(body.slice(-1)));
  });
  for (const pooled of [true, false]) {
    for (const size of [CAP + 1, CAP + 11_424, CAP + 51_424]) {
      const r = await exchange({
        method: 'GET',
        url: new URL(`${origin}/${size}`),
        timeoutMs: 10_000,
        pooled,
      });
      assert.deepEqual(r, { ok: false, error: 'too_large', name: 'too_large', sent: true }, `${size} bytes`);
    }
    const atCap = await exchange({
      method: 'GET',
      url: new URL(`${origin}/${CAP}`),
      timeoutMs: 10_000,
      pooled,
    });
    assert.ok(atCap.ok && atCap.body.length === CAP, 'exactly the cap is read');
  }
});

test('a status query accepts only a JSON media type; an entry answer is not judged by it', async (t) => {
  const types: Record<string, string | undefined> = {
    html: 'text/html; charset=utf-8',
    plain: 'text/plain',
    none: undefined,
    odd: 'application/json garbage/x',
    json: 'application/json',
    charset: 'Application/JSON; charset=utf-8',
    problem: 'application/problem+json',
  };
  const accepts: string[] = [];
  const origin = await serve(t, (path, res, accept) => {
    accepts.push(`${path} ${accept ?? '-'}`);
    const type = types[path.slice(1)];
    res.writeHead(200, type === undefined ? {} : { 'content-type': type });
    res.end('{"object":"payment","status":"succeeded"}');
  });
  const refused: Record<string, string> = {
    html: 'text/html',
    plain: 'text/plain',
    none: 'none',
    odd: 'unreadable',
  };
  for (const [name, shown] of Object.entries(refused)) {
    const url = new URL(`${origin}/${name}`);
    const r = await exchange({ method: 'GET', url, timeoutMs: 5_000, pooled: true });
    assert.deepEqual(r, { ok: false, error: 'media_type', name: shown, sent: true, status: 200 }, name);
    // A caller naming its own JSON-only accept is held to it the same way.
    const own = await exchange({
      method: 'GET',
      url,
      headers: { accept: 'application/json' },
      timeoutMs: 5_000,
    });
    assert.deepEqual(own, { ok: false, error: 'media_type', name: shown, sent: true, status: 200 }, name);
    // An entry (no accept) is read as before: the adapter judges its answer on its own terms.
    const entry = await exchange({ method: 'POST', url, body: '{}', timeoutMs: 5_000 });
    assert.ok(entry.ok && entry.status === 200, name);
  }
  for (const name of ['json', 'charset', 'problem']) {
    const r = await exchange({
      method: 'GET',
      url: new URL(`${origin}/${name}`),
      timeoutMs: 5_000,
      pooled: true,
    });
    assert.ok(r.ok && r.status === 200, name);
  }
  assert.deepEqual(accepts.slice(0, 3), ['/html application/json', '/html application/json', '/html -']);
  assert.equal(isJsonMediaType('application/vnd.api+json'), true);
  assert.equal(isJsonMediaType('application/jsonp'), false);
  assert.equal(isJsonMediaType('text/json'), false);
  assert.equal(isJsonMediaType(undefined), false);
});
