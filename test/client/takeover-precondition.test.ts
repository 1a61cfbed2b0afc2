/**
 * Both SDK clients pass `takeover(lineage, { expectedGeneration })` through: the HTTP client over
 * a real server on 127.0.0.1, the in-process client on the same store, both engines. A mismatch is
 * the BatonError `generation_mismatch` naming both generations, with nothing changed; a match is
 * the successor; no option is the unconditional takeover it always was.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HttpBatonClient } from '../../src/client/http.js';
import { InProcessBatonClient } from '../../src/client/in-process.js';
import type { BatonClient } from '../../src/client/types.js';
import { isBatonError } from '../../src/core/errors.js';
import { enginesUnderTest } from '../store/engines.js';
import { servedWorld, type ServedWorld } from '../missions/http-world.js';

const engines = await enginesUnderTest();

async function refusedAsMismatch(
  api: ServedWorld,
  client: BatonClient,
  lineage: string,
  expected: number,
  current: number,
): Promise<void> {
  const before = await api.snapshot();
  await assert.rejects(client.takeover(lineage, { expectedGeneration: expected }), (err) => {
    assert.ok(isBatonError(err, 'generation_mismatch'), String(err));
    assert.equal(err.status, 409);
    assert.equal(err.details['expectedGeneration'], expected);
    assert.equal(err.details['currentGeneration'], current);
    return true;
  });
  assert.equal(await api.snapshot(), before, 'a refused takeover changes nothing');
}

async function passesTheExpectation(api: ServedWorld, client: BatonClient, lineage: string): Promise<void> {
  await refusedAsMismatch(api, client, lineage, 1, 0);
  const first = await client.takeover(lineage, { expectedGeneration: 0 });
  assert.equal(first.generation, 1);
  await refusedAsMismatch(api, client, lineage, 0, 1);
  const second = await client.takeover(lineage, { expectedGeneration: 1, timeoutMs: 10_000 });
  assert.equal(second.generation, 2);
  const bare = await client.takeover(lineage);
  assert.equal(bare.generation, 3, 'without the option, takeover is unconditional');
}

for (const e of engines) {
  test(`[${e.name}] HttpBatonClient.takeover sends expectedGeneration`, async (t) => {
    const api = await servedWorld(t, e);
    await passesTheExpectation(
      api,
      new HttpBatonClient({ baseUrl: api.url, token: api.operator }),
      'http-agent',
    );
  });

  test(`[${e.name}] InProcessBatonClient.takeover passes expectedGeneration`, async (t) => {
    const api = await servedWorld(t, e);
    await passesTheExpectation(api, new InProcessBatonClient({ service: api.occurrences }), 'local-agent');
  });
}
