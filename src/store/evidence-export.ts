/**
 * `baton log export` (DESIGN.md §2): the evidence log as JSON Lines — one JCS event per line in
 * `seq` order — closed by a checkpoint line signed with the domain's Ed25519 key:
 *   {type:'checkpoint', heads:{subject:{head,count,last_seq}}, events, at, signature:{alg,kid,sig}}
 * The signature covers the JCS of the checkpoint without its `signature` member. A checkpoint kept
 * outside the database is what catches a consistent rewrite of the whole log (docs/store.md).
 * The export refuses to sign a log that does not verify: a signature must never launder tampering.
 */
import { BatonError } from '../core/errors.js';
import { canonicalBytes, canonicalize } from '../core/jcs.js';
import type { StoreEngine } from './engine.js';
import { ChainWalker, type ChainReport, type HeadRecord } from './evidence-chain.js';
import type { EvidenceEvent, EvidenceRow } from './evidence-log.js';
import { StateFold } from './evidence-state.js';
import { walkEvidence, type EvidenceProgress } from './evidence-verify.js';

export interface CheckpointSignature {
  readonly alg: 'Ed25519';
  readonly kid: string;
  /** base64url of the 64-byte Ed25519 signature. */
  readonly sig: string;
}

export interface Checkpoint {
  readonly type: 'checkpoint';
  readonly heads: Readonly<Record<string, HeadRecord>>;
  readonly events: number;
  readonly at: number;
  readonly signature: CheckpointSignature;
}

export type CheckpointSigner = (bytes: Buffer) => { kid: string; sig: string };
export type CheckpointVerifier = (bytes: Buffer, signature: CheckpointSignature) => boolean;

/** The bytes a checkpoint signature covers. */
export function checkpointSigningBytes(c: Omit<Checkpoint, 'signature'>): Buffer {
  return canonicalBytes({ type: c.type, heads: c.heads, events: c.events, at: c.at });
}

/**
 * One event as an export line: the hashed members plus `seq` and `hash`. The chain position
 * (`idx`) is left out, so the line format is unchanged: in an export it follows from the links.
 */
function exportLine(e: EvidenceEvent): string {
  const { seq, subject, type, body, at, actor, prev, hash } = e;
  return canonicalize({ seq, subject, type, body, at, actor, prev, hash });
}

export async function exportEvidence(
  engine: StoreEngine,
  write: (line: string) => void,
  sign: CheckpointSigner,
  options: {
    now?: () => number;
    onProgress?: (p: EvidenceProgress) => void;
    /** Awaited after each page of lines written: resolves once the output can take more. */
    drained?: () => Promise<void>;
  } = {},
): Promise<Checkpoint> {
  // The same checks as `baton log verify`, in the same snapshot: the chains, then the occurrence
  // and authority rows against what their chains record (AOC-REQ-004, -012). A checkpoint signed
  // over a store verify reports broken would launder the tampering.
  const walker = await engine.read(async (tx) => {
    const fold = new StateFold();
    const w = await walkEvidence(
      tx,
      (event) => {
        fold.feed(event);
        write(`${exportLine(event)}\n`);
      },
      options.onProgress,
      options.drained,
    );
    await fold.compareRows(tx);
    for (const p of fold.problems) w.problem(p);
    return w;
  });
  const report = walker.report();
  if (!report.ok) {
    const b = report.firstBroken;
    throw new BatonError(
      'store_corrupt',
      `the evidence log does not verify (first broken link: seq ${b?.seq}, subject ${b?.subject ?? 'unknown'}: ${b?.reason}); no checkpoint was signed`,
      { seq: b?.seq, subject: b?.subject },
    );
  }
  const heads = Object.fromEntries(
    [...walker.chains()].map(([subject, c]) => [
      subject,
      { head: c.head, count: c.count, last_seq: c.lastSeq },
    ]),
  );
  const unsigned = {
    type: 'checkpoint' as const,
    heads,
    events: walker.events,
    at: (options.now ?? Date.now)(),
  };
  const { kid, sig } = sign(checkpointSigningBytes(unsigned));
  const checkpoint: Checkpoint = { ...unsigned, signature: { alg: 'Ed25519', kid, sig } };
  write(`${canonicalize(checkpoint)}\n`);
  return checkpoint;
}

export interface CheckpointReport extends ChainReport {
  readonly signature: 'valid' | 'invalid' | 'missing';
  readonly kid?: string;
}

const EVENT_KEYS = 'actor,at,body,hash,prev,seq,subject,type';
const CHECKPOINT_KEYS = 'at,events,heads,signature,type';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const keysOf = (o: Record<string, unknown>): string => Object.keys(o).sort().join(',');
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** A canonical JSON line, or undefined (a line that is not its own JCS form was edited or forged). */
function parseLine(line: string): unknown {
  try {
    const value: unknown = JSON.parse(line);
    return canonicalize(value) === line ? value : undefined;
  } catch {
    return undefined;
  }
}

function toRow(v: unknown): EvidenceRow | undefined {
  if (!isRecord(v) || keysOf(v) !== EVENT_KEYS) return undefined;
  const { seq, subject, type, body, at, actor, prev, hash } = v;
  const strings = [subject, type, actor, hash].every((s) => typeof s === 'string');
  if (!strings || !isCount(seq) || !isCount(at) || (prev !== null && typeof prev !== 'string'))
    return undefined;
  return { seq, subject, type, body: canonicalize(body), at, actor, prev, hash } as EvidenceRow;
}

function toCheckpoint(v: unknown): Checkpoint | undefined {
  if (!isRecord(v) || keysOf(v) !== CHECKPOINT_KEYS || v['type'] !== 'checkpoint') return undefined;
  const { heads, events, at, signature: s } = v;
  if (!isRecord(heads) || !isCount(events) || !isCount(at) || !isRecord(s)) return undefined;
  if (s['alg'] !== 'Ed25519' || typeof s['kid'] !== 'string' || typeof s['sig'] !== 'string')
    return undefined;
  const ok = Object.values(heads).every(
    (h) => isRecord(h) && typeof h['head'] === 'string' && isCount(h['count']) && isCount(h['last_seq']),
  );
  return ok ? (v as unknown as Checkpoint) : undefined;
}

/** Where an earlier checkpoint's heads must reappear: seq → the subject and hash it had. */
function earlierHeads(previous: Checkpoint | undefined): Map<number, { subject: string; head: string }> {
  const at = new Map<number, { subject: string; head: string }>();
  for (const [subject, h] of Object.entries(previous?.heads ?? {}))
    at.set(h.last_seq, { subject, head: h.head });
  return at;
}

/**
 * Verify an export: every event line's hash and link, each chain's contiguity, the chains against
 * the checkpoint's heads and event count, and the checkpoint's signature (checked by `verify`, which also
 * decides whether `kid` is a key it trusts). With `previous` (an earlier checkpoint kept
 * elsewhere, already verified), also check that this export extends it: each earlier head is
 * still the same event at the same seq, so history was not rewritten in between.
 */
export function verifyCheckpoint(
  lines: Iterable<string>,
  verify: CheckpointVerifier,
  options: { previous?: Checkpoint } = {},
): CheckpointReport {
  const all = [...lines].map((l) => l.replace(/\r?\n$/, '')).filter((l) => l.length > 0);
  const checkpoint = toCheckpoint(parseLine(all.at(-1) ?? ''));
  const walker = new ChainWalker();
  const earlier = earlierHeads(options.previous);
  const eventLines = checkpoint === undefined ? all : all.slice(0, -1);
  eventLines.forEach((line, i) => {
    const row = toRow(parseLine(line));
    if (row === undefined) {
      walker.fault(walker.lastSeq + 1, `line ${i + 1} is not a canonical evidence event`);
      return;
    }
    walker.feed(row);
    const old = earlier.get(Number(row.seq));
    earlier.delete(Number(row.seq));
    if (old !== undefined && (old.subject !== row.subject || old.head !== row.hash)) {
      walker.fault(Number(row.seq), `the event differs from the earlier checkpoint's head of ${old.subject}`);
    }
  });
  for (const [seq, old] of earlier)
    walker.fault(seq, `the earlier checkpoint's head of ${old.subject} is missing`);
  if (checkpoint === undefined) {
    walker.fault(walker.lastSeq + 1, 'the export does not end with a well-formed checkpoint');
    return { ...walker.report(), signature: 'missing' };
  }
  walker.finish(new Map(Object.entries(checkpoint.heads)), checkpoint.events);
  const valid = verify(checkpointSigningBytes(checkpoint), checkpoint.signature);
  if (!valid) walker.fault(0, 'the checkpoint signature does not verify');
  return { ...walker.report(), signature: valid ? 'valid' : 'invalid', kid: checkpoint.signature.kid };
}
