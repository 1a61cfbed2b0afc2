/** What the gateway's parts share: options, the mission extension point, the outcome cache. */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { BatonClient } from '../client/index.js';
import type { Clock } from '../core/clock.js';
import type { BatonErrorCode } from '../core/errors.js';
import type { JsonObject } from '../core/json.js';
import type { KeyResolver } from '../leases/index.js';
import type { McpPolicy, MissionRule } from './policy.js';

export type MissionVerdict =
  | { readonly ok: true; readonly enforced: boolean }
  | { readonly ok: false; readonly code: BatonErrorCode; readonly message: string };

/**
 * EXTENSION POINT for src/missions (issue 11, mission-aware harness): called before anything else
 * touches a consequential call. A refusal stops the call before Baton or the upstream hear of it.
 * `baton mcp` uses batonMissionGate (mission-gate.ts): `meta[rule.meta]` names the Mission, Baton's
 * view (refreshed from the issuer when stale) must be `active`, else `mission_not_active` /
 * `mission_status_unavailable`. MISSIONS_NOT_ENFORCED remains for gateways embedded without one.
 */
export interface MissionGate {
  check(input: {
    readonly tool: string;
    readonly rule: MissionRule;
    readonly meta: JsonObject;
    readonly lineage: string;
    readonly generation: number;
  }): Promise<MissionVerdict>;
}

export const MISSIONS_NOT_ENFORCED: MissionGate = {
  check: () => Promise.resolve({ ok: true, enforced: false }),
};

export interface GatewayOptions {
  readonly baton: BatonClient;
  readonly policy: McpPolicy;
  /** Trusted PTCL lease signers; without them a call carrying a lease is refused (fail closed). */
  readonly leaseKeys?: KeyResolver;
  readonly missions?: MissionGate;
  /** How long to wait for an upstream's answer to a consequential call before it counts as lost. */
  readonly upstreamTimeoutMs?: number;
  readonly clock?: Clock;
  /** Where the gateway reports takeovers and handovers (never a secret). */
  readonly log?: (line: string) => void;
}

/** Upstream answers kept for repeats in this process; after a restart Baton's state answers. */
export class OutcomeCache {
  readonly #map = new Map<string, CallToolResult>();
  constructor(private readonly max = 10_000) {}

  get(occurrenceId: string): CallToolResult | undefined {
    return this.#map.get(occurrenceId);
  }

  set(occurrenceId: string, result: CallToolResult): void {
    this.#map.set(occurrenceId, result);
    if (this.#map.size > this.max) {
      const oldest = this.#map.keys().next();
      if (oldest.done !== true) this.#map.delete(oldest.value);
    }
  }
}
