/**
 * `@restatedev/restate-sdk` 1.17 calls `Promise.withResolvers`, which Node.js has only from 22 on;
 * Baton supports Node 20, so the example service installs the standard behaviour when it is
 * missing (import this module first). Nothing else is changed.
 */
if (typeof Promise.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>(): PromiseWithResolvers<T> {
      let resolve!: (value: T | PromiseLike<T>) => void;
      let reject!: (reason?: unknown) => void;
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}
export {};
