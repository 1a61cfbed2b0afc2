/**
 * Wiring of the harness over a store engine: its unit of work (one transaction per command, the
 * occurrence side of a stop in the SAME transaction) and the Mission gate the occurrences
 * repository calls inside `create` and `enter` (build spec A3.6).
 */
import type { KeyObject } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import { systemClock } from '../core/clock.js';
import { BatonError } from '../core/errors.js';
import { randomIdSource, type IdSource } from '../core/ids.js';
import {
  MissionsService,
  signHarnessEvidence,
  type MissionsUnitOfWork,
  type OccurrenceSide,
  type StalenessBounds,
  type StatusFetcher,
} from '../missions/index.js';
import { decideStopRelease, isRejection, isUnresolved } from '../occurrences/index.js';
import type { StoreEngine, Transaction } from './engine.js';
import { heldWorkItems, type MissionGate } from './missions-gate.js';
import { MissionsReaderSql, MissionsRepositorySql } from './missions-repository.js';
import { OccurrencesRepositorySql } from './occurrences-repository.js';

/** The occurrence side of a harness stop, over the same transaction (A3.7, AOC-REQ-008). */
export function occurrenceSide(tx: Transaction): OccurrenceSide {
  return {
    async releaseReserved(occurrenceId, reason, at) {
      const repo = new OccurrencesRepositorySql(tx);
      const o = await repo.lockOccurrence(occurrenceId);
      if (o === undefined) return 'none';
      if (o.phase === 'entered' || o.phase === 'resolved') return 'entered';
      if (o.phase !== 'reserved') return 'none';
      const a = await repo.lockAuthority(o.authority.id);
      if (a === undefined) throw new BatonError('store_corrupt', 'the occurrence names a missing authority');
      const d = decideStopRelease(o, a, reason, at);
      if (isRejection(d)) throw new BatonError(d.code, d.message, d.details);
      await repo.updateOccurrence(d.occurrence, o.version);
      await repo.updateAuthority(d.authority, a.version);
      await repo.appendEvents(d.events, at, 'system');
      return 'released';
    },
    async inFlight(occurrenceId) {
      const o = await new OccurrencesRepositorySql(tx).getOccurrence(occurrenceId);
      return o !== undefined && o.phase !== 'reserved' && o.phase !== 'released' && isUnresolved(o);
    },
    async currentGeneration(lineage) {
      // Locked (FOR UPDATE on PostgreSQL): a takeover committing after this read would otherwise
      // let the retired generation's command commit too (AOC-REQ-006); SQLite has one writer.
      return (await new OccurrencesRepositorySql(tx).lockLineage(lineage))?.generation ?? null;
    },
  };
}

export function missionsUnitOfWork(engine: StoreEngine): MissionsUnitOfWork {
  return {
    run: (fn) => engine.transaction((tx) => fn(new MissionsRepositorySql(tx), occurrenceSide(tx))),
    read: (fn) => engine.read((ex) => fn(new MissionsReaderSql(ex))),
  };
}

export function harnessGate(service: MissionsService): MissionGate {
  return {
    check: (tx, occurrenceId, actor) =>
      service.checkEntryInTx(new MissionsRepositorySql(tx), occurrenceSide(tx), occurrenceId, actor),
    held: heldWorkItems,
    link: (tx, occurrenceId, workItemId, lineage) =>
      service.linkAtCreateInTx(new MissionsRepositorySql(tx), occurrenceId, workItemId, lineage),
  };
}

export interface HarnessOnOptions {
  readonly domainPrivateKey: KeyObject;
  readonly clock?: Clock;
  readonly ids?: IdSource;
  readonly bounds?: StalenessBounds;
  readonly fetchStatus?: StatusFetcher;
}

/** The harness service over an engine (already migrated), signing evidence with the domain key. */
export function openHarnessOn(engine: StoreEngine, o: HarnessOnOptions): MissionsService {
  return new MissionsService({
    uow: missionsUnitOfWork(engine),
    clock: o.clock ?? systemClock,
    ids: o.ids ?? randomIdSource,
    sign: (e) => signHarnessEvidence(e, o.domainPrivateKey),
    ...(o.bounds !== undefined && { bounds: o.bounds }),
    ...(o.fetchStatus !== undefined && { fetchStatus: o.fetchStatus }),
  });
}
