/** The transport faults the stripe flavour honours: delays are held here, the rest in sending. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Fault } from '../faults.js';
import type { StripeState } from './state.js';

export async function pauseFor(state: StripeState, faults: readonly Fault[]): Promise<void> {
  const ms = faults.reduce((sum, f) => sum + (f.name === 'delay' ? f.ms : 0), 0);
  if (ms > 0) await sleep(ms, undefined, { signal: state.abort.signal });
}
