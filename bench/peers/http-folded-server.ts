/**
 * The HTTP ceiling's server on PostgreSQL (bench/peers/http-ceiling.ts), a child process: the peer
 * job's two Baton calls as the folded + status query ceiling's two statements (folded-status.ts)
 * behind a bare node:http server (http-ceiling-serve.ts), nothing else.
 *   POST /ce?w=W&n=N   create + reserve + bind + enter: one statement (folded.ts)
 *   POST /as?w=W&n=N   the status query as Baton makes it (keep-alive pool, the answer parsed
 *                      strictly, its signature verified against the profile's pin, bound to the
 *                      attempt), then the settle statement
 * Between the two calls the entered occurrence's chain head stays in this process's memory: a
 * server that reads it back does more, so this stays an upper bound.
 *   node dist/bench/peers/http-folded-server.js PROFILE_FILE WORKERS
 *   (PEER_DATABASE_URL: the database; PEER_SANDBOX_HMAC: the sandbox's HMAC key, hex)
 */
import { readFileSync } from 'node:fs';
import { parseStrictJson } from '../../src/core/json.js';
import { validateProfile } from '../../src/occurrences/index.js';
import { openFoldedTransitions, type EnteredChain } from './folded.js';
import { settledFromStatus } from './folded-status.js';
import { serveCeiling } from './http-ceiling-serve.js';

const [profileFile = '', workers = '16'] = process.argv.slice(2);
const url = process.env['PEER_DATABASE_URL'] ?? '';
const hmac = Buffer.from(process.env['PEER_SANDBOX_HMAC'] ?? '', 'hex');
const profile = validateProfile(parseStrictJson(readFileSync(profileFile)));
const folded = await openFoldedTransitions(url, Number(workers), settledFromStatus(hmac, profile, 'http'));
const entered = new Map<number, EnteredChain>();

serveCeiling(
  {
    ce: async (w, n, input) => {
      const e = await folded.enter(w, n);
      entered.set(n, e);
      return {
        occurrence: { id: e.id, phase: 'entered' },
        ticket: { occurrenceId: e.id, nativeKey: e.nativeKey, request: input },
      };
    },
    as: async (_w, n) => {
      const e = entered.get(n);
      if (e === undefined) throw new Error(`job ${n} was not entered here`);
      entered.delete(n);
      const settled = await folded.settle(e);
      return { occurrence: { id: e.id, outcome: settled.outcome, providerReference: settled.reference } };
    },
  },
  () => folded.close(),
);
