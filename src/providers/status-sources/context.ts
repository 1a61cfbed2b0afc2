/** What every status source needs at run time: key material, a clock, limits. */
import type { Clock } from '../../core/clock.js';
import type { KeyResolver } from '../key-resolver.js';

export interface SourceContext {
  readonly keys: KeyResolver;
  readonly clock: Clock;
  readonly timeoutMs: number;
  /** Listing: items per page and how many pages one reading may walk before it is incomplete. */
  readonly pageSize: number;
  readonly maxPages: number;
}
