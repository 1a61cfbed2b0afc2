/**
 * POST /v1/occurrences/{id}/acknowledge-and-settle when a status source cannot be asked: the
 * acknowledgement is recorded and the pass ends `unavailable` (src/providers/settle.ts), and the
 * answer names the failure's stable code (`errorCode`) while the server logs the error, so a fault
 * in Baton is not mistaken for a provider outage (AOC-REQ-009). The fault is real: the server's key
 * resolver throws when the by-key answer is authenticated, against the real sandbox over HTTP.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test, type TestContext } from 'node:test';
import { evidenceOnly } from '../../src/client/adapter.js';
import { BatonError } from '../../src/core/errors.js';
import type { KeyResolver } from '../../src/providers/index.js';
import { enterPayment, openReconcileWorld } from './reconcile-world.js';

interface Settled {
  readonly errorCode?: string;
  readonly missingKnowledge: string | null;
  readonly report: { readonly byReason: Record<string, number> };
  readonly acknowledgement: { readonly missingKnowledge: string | null };
}

/** Settle one payment over HTTP with a server whose key resolver throws `fault()` once armed. */
async function settleWithFault(t: TestContext, invoice: string, fault: () => Error) {
  let armed = false;
  const throwing = (keys: KeyResolver): KeyResolver => ({
    hmacSecret: (id) => {
      if (armed) throw fault();
      return keys.hmacSecret(id);
    },
    secret: (id) => keys.secret(id),
    origins: (id) => keys.origins(id),
  });
  const logs = new PassThrough();
  const lines: string[] = [];
  logs.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  const w = await openReconcileWorld(t, { engine: 'sqlite', webhooks: false, serverKeys: throwing, logs });
  const ticket = await enterPayment(w, invoice);
  const { acknowledgement } = await w.adapter.send(ticket);
  const { occurrenceId, ...body } = evidenceOnly(acknowledgement);
  armed = true;
  const res = await fetch(`${w.url}/v1/occurrences/${occurrenceId}/acknowledge-and-settle`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.credential}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { text, settled: JSON.parse(text) as Settled, logged, url: w.url };
}

function settleLog(logged: readonly Record<string, unknown>[]): Record<string, unknown> | undefined {
  return logged.find((l) => l['msg'] === 'acknowledge-and-settle: status pass failed');
}

test('a source that throws a BatonError: the answer carries its code and the server logs it', async (t) => {
  const { settled, logged, url } = await settleWithFault(
    t,
    'inv-settle-http-1',
    () => new BatonError('credential_unresolved', 'the secret is not there'),
  );
  assert.equal(settled.errorCode, 'credential_unresolved');
  assert.equal(settled.missingKnowledge, 'unavailable');
  assert.deepEqual(settled.report.byReason, { error: 1 });
  assert.equal(
    settled.acknowledgement.missingKnowledge,
    'unauthenticated',
    'the acknowledgement is recorded',
  );
  const line = settleLog(logged);
  assert.ok(line !== undefined, 'the failure is logged');
  assert.equal(line['code'], 'credential_unresolved');
  assert.equal(line['level'], 50, 'at error level');
  // The published contract says so too: an optional member, one of the stable codes.
  const doc = (await (await fetch(`${url}/openapi.json`)).json()) as OpenApi;
  const op = doc.paths['/v1/occurrences/{id}/acknowledge-and-settle']?.post;
  const schema = op?.responses['200']?.content['application/json']?.schema;
  assert.ok(schema !== undefined, 'the route documents its answer');
  assert.ok(schema.properties['errorCode']?.enum?.includes('internal'));
  assert.ok(!schema.required.includes('errorCode'), 'errorCode is optional');
});

interface OpenApi {
  readonly paths: Record<
    string,
    | {
        readonly post?: {
          readonly responses: Record<
            string,
            | {
                readonly content: Record<
                  string,
                  | {
                      readonly schema: {
                        readonly required: string[];
                        readonly properties: Record<string, { readonly enum?: string[] } | undefined>;
                      };
                    }
                  | undefined
                >;
              }
            | undefined
          >;
        };
      }
    | undefined
  >;
}

test('a source that throws a plain Error: errorCode `internal`, the message only in the log', async (t) => {
  const { text, settled, logged } = await settleWithFault(
    t,
    'inv-settle-http-2',
    () => new Error('key store connection lost: hunter2'),
  );
  assert.equal(settled.errorCode, 'internal');
  assert.equal(settled.missingKnowledge, 'unavailable');
  assert.ok(!text.includes('hunter2'), 'the answer never carries the message');
  const line = settleLog(logged);
  assert.equal(line?.['code'], 'internal');
  assert.match(JSON.stringify(line?.['err']), /key store connection lost/, 'the log has the error itself');
});
