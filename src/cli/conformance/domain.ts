/**
 * The conformance run's coordination domain: finite limits (AOC-REQ-006, AOC-CASE-012) and an
 * honest disclosure of every bypass path around it (AOC-REQ-001). The sandbox's /v1 API accepts any
 * caller, so the direct path is present — and the runner demonstrates it rather than hiding it.
 */
import type { DomainConfigInput } from '../../occurrences/index.js';

export const CONFORMANCE_DOMAIN: DomainConfigInput = {
  id: 'conformance-domain',
  limits: {
    maxPendingPerLineage: 2,
    maxInFlightPerLineage: 2,
    maxPendingPerDomain: 100,
    maxInFlightPerDomain: 100,
    entryWindowSeconds: 600,
  },
  bypassPaths: [
    {
      kind: 'direct',
      status: 'present',
      description: 'the sandbox /v1 API accepts any caller: a payment can be created without Baton',
    },
    {
      kind: 'administrator',
      status: 'present',
      description:
        'the sandbox admin API (bearer token) changes faults, clock and webhooks outside the domain',
    },
    {
      kind: 'break-glass',
      status: 'absent',
      description: 'no break-glass credential exists for the sandbox',
    },
    { kind: 'queued', status: 'absent', description: 'the sandbox has no scheduled or queued payments' },
    {
      kind: 'alternate-protocol',
      status: 'absent',
      description: 'the sandbox has no file or batch interface',
    },
    {
      kind: 'system-of-record',
      status: 'unknown',
      description:
        'the sandbox effect ledger is read by the runner as an oracle, not reconciled by the domain',
    },
  ],
};
