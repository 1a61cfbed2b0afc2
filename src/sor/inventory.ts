/**
 * The reference system of record's resources: inventory allocations (the draft's example target,
 * `…/api/v2/inventory/allocations/99281`). An allocation reserves `allocated` of `on_hand` units;
 * `allocate` and `release` are each other's inverse, which is what COMPENSATING_ACTION stages.
 */
import { BatonError } from '../core/errors.js';
import type { JsonObject, JsonValue } from '../core/json.js';
import type { ResourceModel } from '../leases/index.js';

export const ALLOCATIONS_PATH = '/api/v2/inventory/allocations';

export interface Allocation extends JsonObject {
  allocation_id: string;
  sku: string;
  warehouse: string;
  on_hand: number;
  allocated: number;
}

/** The seed: 99281 sits at the epoch just below the draft example's cas_fence_epoch (1048579). */
export const SEED: ReadonlyArray<{ allocation: Allocation; epoch: number }> = [
  {
    allocation: { allocation_id: '99281', sku: 'WIDGET-7', warehouse: 'AMS-1', on_hand: 40, allocated: 12 },
    epoch: 1048578,
  },
  {
    allocation: { allocation_id: '99282', sku: 'GASKET-2', warehouse: 'AMS-1', on_hand: 500, allocated: 0 },
    epoch: 0,
  },
  {
    allocation: { allocation_id: '99283', sku: 'VALVE-9', warehouse: 'RTM-2', on_hand: 8, allocated: 8 },
    epoch: 7,
  },
];

function asAllocation(state: JsonValue): Allocation {
  if (typeof state !== 'object' || state === null || Array.isArray(state)) {
    throw new BatonError('store_corrupt', 'allocation state is not an object');
  }
  return state as Allocation;
}

function quantity(op: JsonObject): number {
  const q = op['quantity'];
  if (typeof q !== 'number' || !Number.isSafeInteger(q) || q < 1) {
    throw new BatonError('input_invalid', 'quantity must be a positive integer');
  }
  return q;
}

export const inventoryModel: ResourceModel = {
  apply(state, operation) {
    const allocation = asAllocation(state);
    if (typeof operation !== 'object' || operation === null || Array.isArray(operation)) {
      throw new BatonError('input_invalid', 'operation must be an object');
    }
    const keys = Object.keys(operation).sort().join(',');
    if (keys !== 'op,quantity') throw new BatonError('input_invalid', 'operation must be {op, quantity}');
    const q = quantity(operation);
    if (operation['op'] === 'allocate') {
      if (allocation.allocated + q > allocation.on_hand)
        throw new BatonError('conflict', 'not enough stock on hand');
      return { ...allocation, allocated: allocation.allocated + q };
    }
    if (operation['op'] === 'release') {
      if (allocation.allocated - q < 0)
        throw new BatonError('conflict', 'cannot release more than is allocated');
      return { ...allocation, allocated: allocation.allocated - q };
    }
    throw new BatonError('input_invalid', 'op must be allocate or release');
  },
};
