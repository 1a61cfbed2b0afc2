/**
 * create-and-enter (issue 16 §4): create + reserve + bind, then provider entry, in ONE transaction
 * and one answer carrying the entry ticket. It composes the two transitions as they are (the same
 * locks, checks and evidence, in the same order), so it refuses exactly what create then enter
 * would: an entry refusal after a fresh create commits the create — the reservation stays, as
 * after a refused `enter` — and is then answered with the occurrence's id in its details.
 */
import { digestBytes } from '../../core/digest.js';
import { BatonError, isBatonError } from '../../core/errors.js';
import type { ExpectedBinding } from '../machine/binding.js';
import { readCreate, readEnter, type CreateInput } from '../inputs.js';
import type { OccurrenceView, ServiceContext } from './context.js';
import { createBuild, createIn } from './create.js';
import { applyEntry, decideEntry, type EntryDecision, type EntryTicket } from './entry.js';

export interface CreateAndEnterInput extends CreateInput {
  /** Binding fields the caller expects at entry; any difference refuses it (AOC-CASE-007). */
  readonly expect?: ExpectedBinding;
}

export interface CreateAndEnterResult {
  readonly occurrence: OccurrenceView;
  /** False when the creation binding returned the original occurrence. */
  readonly created: boolean;
  /**
   * What to send, when this call entered it. Null when the creation binding returned an occurrence
   * that is no longer reserved (entered, resolved or released): it is never entered again (AOC-REQ-010).
   */
  readonly ticket: EntryTicket | null;
}

type Answer =
  | { readonly kind: 'done'; readonly result: CreateAndEnterResult }
  | { readonly kind: 'refused'; readonly error: BatonError };

function splitInput(input: unknown): { create: unknown; expect: unknown } {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    return { create: input, expect: {} };
  const { expect, ...create } = input as Record<string, unknown>;
  return { create, expect: expect ?? {} };
}

/** A refusal of the entry step (Baton's answer, status < 500), not a fault: it may follow a commit. */
function isRefusal(error: unknown): error is BatonError {
  return isBatonError(error) && error.status < 500;
}

function withOccurrence(error: BatonError, occurrenceId: string): BatonError {
  return new BatonError(error.code, error.message, { ...error.details, occurrenceId });
}

export async function createAndEnter(ctx: ServiceContext, input: unknown): Promise<CreateAndEnterResult> {
  const split = splitInput(input);
  const f = readCreate(split.create);
  const occurrenceId = ctx.ids.id('occ');
  // Bad input refuses before the transaction, as each step's own would.
  const { expect } = readEnter({ credential: f.credential, occurrenceId, expect: split.expect });
  const answer = await ctx.uow.run(async (repo): Promise<Answer> => {
    // One round trip loads and locks what the create reads, as a plain create does (issue 16 §2).
    if (f.remedy === null)
      await repo.prefetchCreate?.(digestBytes(f.credential), f.creationKey, f.authority.id);
    const c = await createIn(ctx, repo, occurrenceId, f.credential, createBuild(f), f.workItemId);
    if (c.occurrence.phase !== 'reserved') return { kind: 'done', result: { ...c, ticket: null } };
    const cmd = { credential: f.credential, occurrenceId: c.occurrence.id, expect };
    let decision: EntryDecision;
    try {
      decision = await decideEntry(ctx, repo, cmd);
    } catch (error) {
      // Nothing of the entry was written: commit the create alone (or nothing, on a replay).
      if (isRefusal(error)) return { kind: 'refused', error: withOccurrence(error, c.occurrence.id) };
      throw error;
    }
    const entered = await applyEntry(repo, decision);
    if ('refused' in entered) {
      const refusal = new BatonError(entered.refused, 'the Mission does not permit provider entry now', {
        occurrenceId: c.occurrence.id,
      });
      return { kind: 'refused', error: refusal };
    }
    return { kind: 'done', result: { occurrence: entered.occurrence, created: c.created, ticket: entered } };
  });
  if (answer.kind === 'refused') throw answer.error;
  return answer.result;
}
