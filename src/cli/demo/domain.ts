/** The demo's coordination domain: generous finite limits and an honest bypass disclosure. */
import type { DomainConfigInput } from '../../occurrences/index.js';

export const DEMO_DOMAIN: DomainConfigInput = {
  id: 'demo-domain',
  limits: {
    maxPendingPerLineage: 10,
    maxInFlightPerLineage: 10,
    maxPendingPerDomain: 100,
    maxInFlightPerDomain: 100,
    entryWindowSeconds: 300,
  },
  bypassPaths: [
    { kind: 'direct', status: 'present', description: 'the sandbox API accepts payments from any caller' },
    {
      kind: 'administrator',
      status: 'present',
      description: 'the sandbox admin API changes faults and clock',
    },
    { kind: 'break-glass', status: 'absent', description: 'none issued' },
    { kind: 'queued', status: 'absent', description: 'the sandbox queues nothing' },
    { kind: 'alternate-protocol', status: 'absent', description: 'none' },
    { kind: 'system-of-record', status: 'unknown', description: 'not reconciled by the demo' },
  ],
};
