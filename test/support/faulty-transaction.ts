/**
 * A transaction whose statements throw BatonError `unavailable` (message `INJECTED: …`) while
 * `failing(sql, params)` says so: the fault-injection wrapper the missions tests share.
 */
import { BatonError } from '../../src/core/errors.js';
import type { Transaction } from '../../src/store/index.js';

export function faultyTransaction(
  tx: Transaction,
  failing: (sql: string, params: readonly unknown[]) => boolean,
  message: string,
): Transaction {
  const check = (sql: string, params: readonly unknown[] = []) => {
    if (failing(sql, params)) throw new BatonError('unavailable', `INJECTED: ${message}`);
  };
  return {
    forUpdate: tx.forUpdate,
    ...(tx.serverFunctions !== undefined && { serverFunctions: tx.serverFunctions }),
    run: async (sql, params) => (check(sql, params), tx.run(sql, params)),
    get: async (sql, params) => (check(sql, params), tx.get(sql, params)),
    all: async (sql, params) => (check(sql, params), tx.all(sql, params)),
  };
}
