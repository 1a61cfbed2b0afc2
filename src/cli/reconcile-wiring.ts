/**
 * Store-side wiring for the reconciler: the unresolved occurrences of EVERY lineage. The
 * occurrences service only lists one lineage at a time, and src/providers may not import the
 * store, so this small reader lives at the edge (DESIGN.md §1).
 */
import type { OccurrenceView } from '../occurrences/index.js';
import { isUnresolved } from '../occurrences/index.js';
import type { StoreEngine } from '../store/index.js';
import { occurrencesUnitOfWork } from '../store/index.js';

export function allUnresolvedLister(engine: StoreEngine, limit = 1000): () => Promise<OccurrenceView[]> {
  const uow = occurrencesUnitOfWork(engine);
  return () =>
    uow.read(async (repo) => {
      const rows = await repo.listOccurrences({ phases: ['entered'], limit });
      return rows.filter(isUnresolved).map((o) => ({ ...o, unresolved: true }));
    });
}
