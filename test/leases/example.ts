/**
 * The members of the PTCL draft's §3 example lease that every lease fixture shares (the tests and
 * bench/leases.bench.ts add the hashes and instants they need). No node:test import here, so the
 * bench can use it.
 */
import type { UnsignedLease } from '../../src/leases/index.js';

export const DRAFT_LEASE_MEMBERS = {
  ptcl_version: '1.0',
  lease_id: 'urn:uuid:3a88e112-901c-4b77-8821-00912a34f119',
  sor_target_uri: 'https://erp.example.com/api/v2/inventory/allocations/99281',
  recovery_mode: 'COMPENSATING_ACTION',
  t_req_ms: 450,
  t_granted_ms: 2000,
  cas_fence_epoch: 1048579,
} as const satisfies Partial<UnsignedLease>;
