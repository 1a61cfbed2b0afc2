/**
 * Facts for revocation-barrier records (B3.4), read from the evidence log and the harness's
 * occurrence gates (`msn_occurrence_gates`, migration 006): for every applied mission event that
 * turned an active view non-active, each governed occurrence of that Mission entered during the
 * active period it ends (after the previous barrier, before Baton committed this one; entries
 * after it are refused by the gate, A3.6). Chains are re-verified here, so an altered event makes
 * the record UNKNOWN, never MATCH. Read-time projection: the missions context is untouched
 * (docs/observations.md, "Revocation-barrier records").
 */
import { decodeJwt } from 'jose';
import { isRfc3339DateTime, parseRfc3339 } from '../core/time.js';
import type { BarrierRecordFacts } from '../observations/index.js';
import type { SqlExecutor } from './engine.js';
import { readChain, type VerifiedChain } from './observations-facts.js';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});

interface Gate {
  occurrence_id: string;
  mission_origin: string;
  mission_id: string;
}

/** An applied state change on a mission chain, with what it says about the issuer's time. */
interface Applied {
  readonly event: VerifiedChain['events'][number];
  readonly state: string;
  readonly source: 'signal' | 'status';
  /** Issuer time (ms) the state held at: a SET's committed_at, a Status answer's iat (null: unreadable). */
  readonly issuerAt: number | null;
}

/** An unreadable time is an unknown bound, which can only widen UNKNOWN (OBS-13). */
function timeOrNull(v: unknown): number | null {
  if (typeof v !== 'string' || !isRfc3339DateTime(v)) return null;
  return parseRfc3339(v);
}

/** The issuer's `iat` of an archived (already verified) Status answer, in ms. */
async function statusIat(ex: SqlExecutor, jwsDigest: unknown): Promise<number | null> {
  if (typeof jwsDigest !== 'string') return null;
  const row = await ex.get<{ jws: string }>('SELECT jws FROM msn_status_archive WHERE jws_digest = ?', [
    jwsDigest,
  ]);
  if (row === undefined) return null;
  try {
    const iat = decodeJwt(row.jws).iat;
    return typeof iat === 'number' ? iat * 1000 : null;
  } catch {
    return null; // unreadable ⇒ the bound is unknown, which can only widen UNKNOWN (OBS-13)
  }
}

async function appliedChanges(ex: SqlExecutor, chain: VerifiedChain): Promise<Applied[]> {
  const out: Applied[] = [];
  for (const e of chain.events) {
    const b = obj(e.body);
    if (e.type === 'mission_signal_applied' && typeof b['state'] === 'string') {
      out.push({ event: e, state: b['state'], source: 'signal', issuerAt: timeOrNull(b['committed_at']) });
    } else if (
      e.type === 'mission_status_verified' &&
      b['applied'] === true &&
      typeof b['state'] === 'string'
    )
      out.push({
        event: e,
        state: b['state'],
        source: 'status',
        issuerAt: await statusIat(ex, b['jws_digest']),
      });
  }
  return out;
}

interface Barrier {
  readonly applied: Applied;
  /** Earliest t_r: for a Status barrier, when the issuer last said `active`. */
  readonly earliest: number | null;
  /** Entries in (afterSeq, applied.event.seq) belong to the active period this barrier ends. */
  readonly afterSeq: number;
}

function barriersOf(changes: readonly Applied[]): Barrier[] {
  const out: Barrier[] = [];
  let lastActive: Applied | null = null;
  let previousBarrierSeq = 0;
  let wasActive = false;
  for (const c of changes) {
    if (c.state === 'active') {
      lastActive = c;
      wasActive = true;
      continue;
    }
    if (!wasActive) continue; // not a turn: the view was already non-active or never active
    wasActive = false;
    const earliest = c.source === 'signal' ? c.issuerAt : (lastActive?.issuerAt ?? null);
    out.push({ applied: c, earliest, afterSeq: previousBarrierSeq });
    previousBarrierSeq = c.event.seq;
  }
  return out;
}

async function lineageOf(ex: SqlExecutor, occurrence: string): Promise<string | undefined> {
  const r = await ex.get<{ lineage: string }>('SELECT lineage FROM aoc_occurrences WHERE id = ?', [
    occurrence,
  ]);
  return r?.lineage;
}

async function missionBarrierFacts(
  ex: SqlExecutor,
  domain: string,
  origin: string,
  missionId: string,
  occurrences: readonly string[],
): Promise<BarrierRecordFacts[]> {
  const mission = await readChain(ex, `mission:${origin}#${missionId}`);
  const barriers = barriersOf(await appliedChanges(ex, mission));
  if (barriers.length === 0) return [];
  const out: BarrierRecordFacts[] = [];
  for (const id of occurrences) {
    const chain = await readChain(ex, `occurrence:${id}`);
    const entered = chain.events.find((e) => e.type === 'provider_entered');
    const lineage = (await lineageOf(ex, id)) ?? '';
    for (const b of barriers) {
      const e = b.applied.event;
      if (entered === undefined || entered.seq <= b.afterSeq || entered.seq >= e.seq) continue;
      const generation = obj(entered.body)['generation'];
      out.push({
        domain,
        origin,
        missionId,
        barrier: {
          subject: mission.subject,
          idx: e.idx,
          hash: e.hash,
          seq: e.seq,
          at: e.at,
          state: b.applied.state,
          source: b.applied.source,
        },
        // t_r unknown (an unreadable committed_at or iat) ⇒ Baton's commit time bounds it above.
        committedAt: b.applied.issuerAt ?? e.at,
        committedAtEarliest: b.applied.issuerAt === null ? null : b.earliest,
        occurrence: id,
        lineage,
        entered: {
          subject: chain.subject,
          idx: entered.idx,
          hash: entered.hash,
          at: entered.at,
          generation: typeof generation === 'number' ? generation : null,
        },
        chainsVerify: mission.verifies && chain.verifies,
      });
    }
  }
  return out;
}

/** Facts for every revocation-barrier record the evidence log supports. */
export async function barrierFacts(ex: SqlExecutor, domain: string): Promise<BarrierRecordFacts[]> {
  const gates = await ex.all<Gate>(
    'SELECT occurrence_id, mission_origin, mission_id FROM msn_occurrence_gates ORDER BY mission_origin, mission_id, occurrence_id',
  );
  const byMission = new Map<string, { origin: string; id: string; occurrences: string[] }>();
  for (const g of gates) {
    const key = `${g.mission_origin}#${g.mission_id}`;
    const m = byMission.get(key) ?? { origin: g.mission_origin, id: g.mission_id, occurrences: [] };
    m.occurrences.push(g.occurrence_id);
    byMission.set(key, m);
  }
  const out: BarrierRecordFacts[] = [];
  for (const m of byMission.values())
    out.push(...(await missionBarrierFacts(ex, domain, m.origin, m.id, m.occurrences)));
  return out;
}
