/**
 * Every query a `pg` client of this process sends, seen by a bench (the pool's clients share the
 * prototype): bench/peers/cpu.ts counts them, bench/postgres-replay.bench.ts records them. The
 * listener gets the call's arguments and what `query` returned (a promise of the answer, unless
 * the caller passed a callback).
 */
import pg from 'pg';

type Query = (this: unknown, ...args: unknown[]) => unknown;
export type QueryListener = (args: readonly unknown[], returned: unknown) => void;

const listeners: QueryListener[] = [];
const proto = pg.Client.prototype as unknown as { query: Query };
const original: Query = proto.query;
proto.query = function (this: unknown, ...args: unknown[]) {
  const returned = original.apply(this, args);
  for (const listener of listeners) listener(args, returned);
  return returned;
};

export function watchPgQueries(listener: QueryListener): void {
  listeners.push(listener);
}
