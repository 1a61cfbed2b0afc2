/**
 * The store's nesting check (src/store/nesting-guard.ts): on, it tells a transaction function's
 * async context from any other; off (the default outside tests), it marks nothing.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NestingGuard, nestingCheckFromEnv } from '../../src/store/nesting-guard.js';

test('the default is on only for BATON_STORE_NESTING_CHECK=1', () => {
  assert.equal(nestingCheckFromEnv({ BATON_STORE_NESTING_CHECK: '1' }), true);
  assert.equal(nestingCheckFromEnv({}), false);
  assert.equal(nestingCheckFromEnv({ BATON_STORE_NESTING_CHECK: 'true' }), false);
  assert.equal(nestingCheckFromEnv({ BATON_STORE_NESTING_CHECK: '0' }), false);
});

test('on: inside() holds in the function and what it awaits, not beside it or after it', async () => {
  const guard = new NestingGuard(true);
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const running = guard.run(async () => {
    await gate;
    await Promise.resolve();
    return guard.inside();
  });
  const beside = guard.inside();
  release();
  assert.equal(await running, true);
  assert.equal(beside, false);
  assert.equal(guard.inside(), false);
});

test('on: a function that throws leaves its context unmarked', async () => {
  const guard = new NestingGuard(true);
  let later: Promise<boolean> | undefined;
  await assert.rejects(
    guard.run(() => {
      // Work the function started but did not await: it runs after the function has failed.
      later = new Promise((r) => setTimeout(() => r(guard.inside()), 5));
      return Promise.reject(new Error('refused'));
    }),
    /refused/,
  );
  assert.equal(await later, false);
});

test('off: nothing is ever inside', async () => {
  const guard = new NestingGuard(false);
  assert.equal(await guard.run(() => Promise.resolve(guard.inside())), false);
});
