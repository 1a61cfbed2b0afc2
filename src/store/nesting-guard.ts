/**
 * The check that refuses a store transaction or read opened inside another transaction's async
 * context: on SQLite it would wait for itself (the one writer waits for the outer transaction,
 * which waits for it), and PostgreSQL refuses it alike so both engines behave the same.
 *
 * It needs AsyncLocalStorage, and on Node 20 one AsyncLocalStorage in use makes every promise of
 * the process run promise hooks — measured at about a fifth of a gated entry's instructions
 * (docs/store.md, "The nesting check"). A nesting is a bug in Baton's own code, never input, so
 * the check is on where such bugs are looked for — the test suite (`scripts/run-tests.mjs` sets
 * `BATON_STORE_NESTING_CHECK=1`) or an engine opened with `nestingCheck: true` — and off otherwise.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** The default of the engines' `nestingCheck` option: on only when the environment asks for it. */
export function nestingCheckFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return env['BATON_STORE_NESTING_CHECK'] === '1';
}

export class NestingGuard {
  readonly #context: AsyncLocalStorage<{ active: boolean }> | undefined;

  constructor(enabled: boolean) {
    this.#context = enabled ? new AsyncLocalStorage() : undefined;
  }

  /** The caller runs inside a transaction function this guard is running (never, when off). */
  inside(): boolean {
    return this.#context?.getStore()?.active === true;
  }

  /** Run a transaction function, marking its async context until it settles. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const context = this.#context;
    if (context === undefined) return fn();
    const marker = { active: true };
    try {
      return await context.run(marker, fn);
    } finally {
      marker.active = false;
    }
  }
}
